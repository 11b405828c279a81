//! Unit tests of image checking, staging and linking.
use super::*;
use crate::datasets::import::candidate_file::read_candidates;
use crate::domain::candidates::{FileFormat, FileRef};
use crate::domain::normalize::NormalizeMode;

fn files_under(p: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            out.extend(files_under(&e.path()));
        } else {
            out.push(e.file_name().to_string_lossy().to_string());
        }
    }
    out
}

fn png(shade: u8, side: u32) -> Vec<u8> {
    let img = image::RgbImage::from_pixel(side, side / 2, image::Rgb([shade, 0, 0]));
    let mut out = Vec::new();
    img.write_to(&mut io::Cursor::new(&mut out), image::ImageFormat::Png).unwrap();
    out
}

#[test]
fn staged_files_become_final_only_when_promoted() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, store) = (tmp.path().join("src"), ImageStore::new(tmp.path().join("store")));
    std::fs::create_dir_all(&src).unwrap();
    // Two names with the same content, one large image (gets a display copy), one broken file.
    for (name, bytes) in [
        ("a.png", png(1, 8)),
        ("same-as-a.png", png(1, 8)),
        ("big.png", png(2, 1000)),
        ("bad.png", b"\x89PNG\r\n\x1a\nxx".to_vec()),
    ] {
        std::fs::write(src.join(name), bytes).unwrap();
    }
    let refs: Vec<FileRef> = ["a.png", "same-as-a.png", "big.png", "bad.png", "gone.png"]
        .iter()
        .map(|n| FileRef { dir: ImageDir::Positives, name: (*n).into(), line: 2, column: "filename", uses: 1 })
        .collect();

    let staging = Staging::new(&store).unwrap();
    let checked = check_files(&refs[..3], &src, &src, &store, Some(&staging));
    assert_eq!(checked.iter().filter(|c| c.as_ref().unwrap().staged).count(), 2, "one copy per content");
    assert_eq!(files_under(store.root()).len(), 3, "two originals and one display copy, staged");
    drop(staging);
    assert!(files_under(store.root()).is_empty(), "dropped: nothing left");

    let staging = Staging::new(&store).unwrap();
    let checked = check_files(&refs, &src, &src, &store, Some(&staging));
    let said = |i: usize| match &checked[i] {
        Err(ImageProblem::File(why)) => why.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(said(3), "unreadable PNG header: unexpected end of file");
    assert_eq!(said(4), "not found");
    staging.promote().unwrap();
    let big = checked[2].as_ref().unwrap();
    assert!(big.has_display && (big.header.width, big.header.height) == (1000, 500));
    let hash = hex::encode(big.hash);
    assert!(store.original_path(&hash).is_file() && store.display_path(&hash).is_file());
    assert_eq!(files_under(store.root()).len(), 3);
    assert!(files_under(store.root()).iter().all(|f| parse_hash_like(f)), "only final names");
}

#[test]
fn linking_shares_the_source_and_catches_files_changed_since_the_check() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, store) = (tmp.path().join("src"), ImageStore::new(tmp.path().join("store")));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("a.png"), png(1, 8)).unwrap();
    std::fs::write(src.join("b.png"), png(2, 8)).unwrap();
    let refs: Vec<FileRef> = ["a.png", "b.png", "a.png"]
        .iter()
        .enumerate()
        .map(|(i, n)| FileRef {
            dir: if i == 2 { ImageDir::Negatives } else { ImageDir::Positives },
            name: (*n).into(),
            line: 2,
            column: "filename",
            uses: 1,
        })
        .collect();
    let checked: Vec<Checked> = check_files(&refs, &src, &src, &store, None).into_iter().map(Result::unwrap).collect();
    std::fs::write(src.join("b.png"), png(3, 8)).unwrap(); // changed after its check
    let linked = link_files(&refs, &checked, &src, &src, &store).unwrap();
    let linked: Vec<Result<bool, String>> = linked
        .into_iter()
        .map(|l| l.map_err(|e| if let ImageProblem::File(why) = e { why } else { panic!("{e}") }))
        .collect();
    assert_eq!(
        linked,
        [Ok(true), Err("changed while importing (its content no longer matches the check)".into()), Ok(false)]
    );
    use std::os::unix::fs::MetadataExt;
    let a = store.original_path(&hex::encode(checked[0].hash));
    assert_eq!(std::fs::metadata(&a).unwrap().ino(), std::fs::metadata(src.join("a.png")).unwrap().ino());
    assert!(
        !store.original_path(&hex::encode(checked[1].hash)).exists(),
        "the changed file is not left under a wrong name"
    );
}

/// A store that cannot take a file is the server's fault, not the file's:
/// it comes back as a store problem (logged, never shown), not as a line of
/// the refusal that names the image.
#[test]
fn a_store_that_cannot_take_a_file_is_a_store_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let (src, store) = (tmp.path().join("src"), ImageStore::new(tmp.path().join("store")));
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(src.join("a.png"), png(1, 8)).unwrap();
    let refs = [FileRef { dir: ImageDir::Positives, name: "a.png".into(), line: 2, column: "filename", uses: 1 }];
    let hash = hex::encode(Sha256::digest(png(1, 8)));
    let staging = Staging::new(&store).unwrap();
    // Its shard directory is a file now: nothing can be written under it.
    let shard = store.original_path(&hash).parent().unwrap().to_path_buf();
    std::fs::remove_dir(&shard).unwrap();
    std::fs::write(&shard, b"not a directory").unwrap();
    let checked = check_files(&refs, &src, &src, &store, Some(&staging));
    assert!(matches!(&checked[0], Err(ImageProblem::Store("staging a copy", _))), "{:?}", checked[0]);
}

fn parse_hash_like(name: &str) -> bool {
    crate::store::images::parse_hash(name).is_some()
}

#[test]
fn candidate_rows_keep_their_physical_lines_in_crlf_files() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bivlc/candidates.csv");
    let fixture = std::fs::read_to_string(fixture).unwrap();
    let mut head = fixture.lines().take(3).collect::<Vec<_>>().join("\r\n");
    head.push_str("\r\n");
    let path = tmp.path().join("crlf.csv");
    std::fs::write(&path, &head).unwrap();
    let (batch, _) = read_candidates(&path, FileFormat::Csv, NormalizeMode::None).unwrap();
    let lines: Vec<u64> = batch.rows.iter().map(|r| r.line).collect();
    assert_eq!(lines, [2, 3], "{:?}", batch.problems.shown);
}

#[test]
fn a_record_past_the_bound_is_refused_where_it_starts_in_either_format() {
    let tmp = tempfile::tempdir().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bivlc/candidates.csv");
    let fixture = std::fs::read_to_string(fixture).unwrap();
    let rows: Vec<&str> = fixture.lines().take(3).collect();
    // Line 3 opens a quote that never closes: the rest of a big file is one field.
    let huge = "x".repeat(3 << 20);
    let csv = format!("{}\n{}\n\"{huge}\n", rows[0], rows[1]);
    let path = tmp.path().join("huge.csv");
    std::fs::write(&path, csv).unwrap();
    let e = read_candidates(&path, FileFormat::Csv, NormalizeMode::None).unwrap_err().to_string();
    assert!(e.contains("line 3: a record of more than 1 MiB"), "{e}");
    let jsonl = format!("{{\"caption\": \"a\"}}\n{{\"caption\": \"{huge}\"}}\n");
    let path = tmp.path().join("huge.jsonl");
    std::fs::write(&path, jsonl).unwrap();
    let e = read_candidates(&path, FileFormat::JsonLines, NormalizeMode::None).unwrap_err().to_string();
    assert!(e.contains("line 2: a record of more than 1 MiB"), "{e}");
    // Under the bound, the same file reads (its problems are the rows', not an IO error).
    let fine = format!("{}\n{}\n{}\n", rows[0], rows[1], rows[2]);
    std::fs::write(&path, fine).unwrap();
    assert!(read_candidates(&path, FileFormat::Csv, NormalizeMode::None).is_ok());
}
