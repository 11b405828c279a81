use rusqlite::{Connection, OpenFlags};

fn through_the_vfs(path: &std::path::Path, synchronous: &str) -> Connection {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags_and_vfs(path, flags, super::register().unwrap()).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {synchronous}; PRAGMA wal_autocheckpoint = 200;"
    ))
    .unwrap();
    conn
}

/// What another connection (the default VFS, as the server's readers use)
/// sees: rows, and the sum of their sizes.
fn seen(path: &std::path::Path) -> (i64, i64) {
    let reader = Connection::open(path).unwrap();
    reader.query_row("SELECT count(*), coalesce(sum(length(b)), 0) FROM t", [], |r| Ok((r.get(0)?, r.get(1)?))).unwrap()
}

/// Commits of many sizes (one page, hundreds, and one past the gathering
/// cap), with automatic checkpoints reading the WAL back in between: after
/// each commit another connection sees exactly what was committed, even
/// with `synchronous = NORMAL` (no sync at commit, so nothing but the
/// commit frame's own flush puts the bytes in the file before readers look).
#[test]
fn every_commit_is_in_the_file_before_readers_see_it() {
    for synchronous in ["NORMAL", "FULL"] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.sqlite");
        let conn = through_the_vfs(&path, synchronous);
        conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB NOT NULL)").unwrap();
        let (mut rows, mut bytes) = (0i64, 0i64);
        for (commit, (n, size)) in [(1, 10), (300, 900), (5, 5000), (1, 3_000_000), (3, 3_000_000), (50, 100)]
            .into_iter()
            .cycle()
            .take(24)
            .enumerate()
        {
            let tx = conn.unchecked_transaction().unwrap();
            for i in 0..n {
                let blob = vec![(commit + i) as u8; size];
                tx.execute("INSERT INTO t (b) VALUES (?1)", [blob]).unwrap();
            }
            // A rewrite of earlier rows too: frames for pages already in the WAL.
            tx.execute("UPDATE t SET b = b WHERE id % 7 = 0", []).unwrap();
            tx.commit().unwrap();
            rows += n as i64;
            bytes += (n * size) as i64;
            assert_eq!(seen(&path), (rows, bytes), "{synchronous}, after commit {commit}");
        }
        // A rolled-back transaction leaves nothing.
        let tx = conn.unchecked_transaction().unwrap();
        tx.execute("INSERT INTO t (b) VALUES (x'00')", []).unwrap();
        tx.rollback().unwrap();
        drop(conn);
        let check: String =
            Connection::open(&path).unwrap().query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
        assert_eq!(check, "ok");
        assert_eq!(seen(&path), (rows, bytes), "{synchronous}, reopened");
    }
}

/// A connection reads its own frames back (pages it dropped from its cache,
/// the WAL header at recovery): it gets what it wrote.
#[test]
fn a_connection_reads_back_its_own_frames() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.sqlite");
    let conn = through_the_vfs(&path, "FULL");
    conn.execute_batch("PRAGMA cache_size = 2; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB NOT NULL)")
        .unwrap();
    let tx = conn.unchecked_transaction().unwrap();
    for i in 0..400u32 {
        tx.execute("INSERT INTO t (b) VALUES (?1)", [i.to_le_bytes().repeat(300)]).unwrap();
    }
    // With a two-page cache, this reads pages back while the transaction is open.
    let sum: i64 = tx.query_row("SELECT sum(length(b)) FROM t", [], |r| r.get(0)).unwrap();
    assert_eq!(sum, 400 * 1200);
    tx.commit().unwrap();
    let last: Vec<u8> = conn.query_row("SELECT b FROM t WHERE id = 400", [], |r| r.get(0)).unwrap();
    assert_eq!(last, 399u32.to_le_bytes().repeat(300));
    assert_eq!(seen(&path), (400, 400 * 1200));
}
