//! A SQLite VFS for the answer writer's connection: the WAL frames of one
//! commit reach the file in one write. SQLite writes each frame as two
//! writes (its 24-byte header, then its page), and an answer changes about
//! six pages, so a batch cost a dozen `pwrite` calls per answer: the
//! writer's largest cost in the kernel (docs/performance.md, session 25);
//! now it is one call per 120 KiB.
//!
//! Only WAL files are wrapped; the database file, its shared memory and the
//! rest are the default VFS's own, so locking is unchanged and other
//! connections share the files as before. The gathered bytes are written
//! before any other operation on the WAL file (read, sync, size, truncate,
//! close, ...) and right after a commit's last frame. So the file holds a
//! commit's frames before SQLite syncs them or shows them to readers in the
//! WAL index, as without this layer, and a failed write fails its commit.
use rusqlite::ffi;
use std::ffi::{c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

/// The name a connection opens with (`Connection::open_with_flags_and_vfs`).
pub const NAME: &str = "hardneg-gathered-wal";
const NAME_C: &CStr = c"hardneg-gathered-wal";
/// Gathered bytes are written once they reach this much, commit or not.
const MAX_GATHERED: usize = 8 << 20;
/// A WAL frame's header; its bytes 4..8 are nonzero on a commit's last frame.
const FRAME_HEADER: usize = 24;
/// Our part of a WAL file's handle; the default VFS's handle follows it.
const HEADER: usize = std::mem::size_of::<WalFile>().next_multiple_of(8);

#[repr(C)]
struct WalFile {
    base: ffi::sqlite3_file,
    inner: *mut ffi::sqlite3_file,
    gathered: *mut Gathered,
}

#[derive(Default)]
struct Gathered {
    start: i64,
    bytes: Vec<u8>,
    /// The last write was a commit frame's header: its page ends the commit.
    commit_page_next: bool,
}

/// The default VFS, which does all the work.
static DEFAULT: AtomicPtr<ffi::sqlite3_vfs> = AtomicPtr::new(ptr::null_mut());
static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();

/// Registers the VFS once per process (it does not become the default) and
/// gives its name.
pub fn register() -> Result<&'static str, String> {
    REGISTERED.get_or_init(|| unsafe { install() }).clone().map(|()| NAME)
}

unsafe fn install() -> Result<(), String> {
    let default = ffi::sqlite3_vfs_find(ptr::null());
    if default.is_null() {
        return Err("SQLite has no default VFS".into());
    }
    DEFAULT.store(default, Ordering::Release);
    // The default's own functions (and data) for everything but opening.
    let mut vfs = *default;
    vfs.pNext = ptr::null_mut();
    vfs.zName = NAME_C.as_ptr();
    vfs.szOsFile = (HEADER + (*default).szOsFile as usize) as c_int;
    vfs.xOpen = Some(open);
    match ffi::sqlite3_vfs_register(Box::leak(Box::new(vfs)), 0) {
        ffi::SQLITE_OK => Ok(()),
        rc => Err(format!("SQLite refused the gathered-WAL VFS (code {rc})")),
    }
}

unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let default = DEFAULT.load(Ordering::Acquire);
    let default_open = (*default).xOpen.expect("the default VFS opens files");
    if flags & ffi::SQLITE_OPEN_WAL == 0 {
        return default_open(default, name, file, flags, out_flags);
    }
    let inner = file.cast::<u8>().add(HEADER).cast::<ffi::sqlite3_file>();
    let rc = default_open(default, name, inner, flags, out_flags);
    if rc != ffi::SQLITE_OK {
        (*file).pMethods = ptr::null();
        return rc;
    }
    let gathered = Box::into_raw(Box::<Gathered>::default());
    file.cast::<WalFile>().write(WalFile { base: ffi::sqlite3_file { pMethods: &METHODS }, inner, gathered });
    ffi::SQLITE_OK
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(close),
    xRead: Some(read),
    xWrite: Some(write),
    xTruncate: Some(truncate),
    xSync: Some(sync),
    xFileSize: Some(file_size),
    xLock: Some(lock),
    xUnlock: Some(unlock),
    xCheckReservedLock: Some(check_reserved_lock),
    xFileControl: Some(file_control),
    xSectorSize: Some(sector_size),
    xDeviceCharacteristics: Some(device_characteristics),
    xShmMap: Some(shm_map),
    xShmLock: Some(shm_lock),
    xShmBarrier: Some(shm_barrier),
    xShmUnmap: Some(shm_unmap),
    xFetch: Some(fetch),
    xUnfetch: Some(unfetch),
};

unsafe fn parts<'a>(
    file: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'a ffi::sqlite3_io_methods, &'a mut Gathered) {
    let w = file.cast::<WalFile>();
    let inner = (*w).inner;
    (inner, &*(*inner).pMethods, &mut *(*w).gathered)
}

/// The most the default VFS writes in one call: its unix write masks the
/// length with 0x1ffff, so a longer write would be cut short.
const MAX_WRITE: usize = 120 << 10;

/// Writes what is gathered, in as few calls as the default VFS allows.
unsafe fn flush(file: *mut ffi::sqlite3_file) -> c_int {
    let (inner, m, g) = parts(file);
    g.commit_page_next = false;
    let x_write = m.xWrite.expect("a file writes");
    let mut rc = ffi::SQLITE_OK;
    let mut offset = g.start;
    for chunk in g.bytes.chunks(MAX_WRITE) {
        rc = x_write(inner, chunk.as_ptr().cast(), chunk.len() as c_int, offset);
        if rc != ffi::SQLITE_OK {
            break;
        }
        offset += chunk.len() as i64;
    }
    g.bytes.clear();
    rc
}

unsafe extern "C" fn write(file: *mut ffi::sqlite3_file, buf: *const c_void, amt: c_int, offset: i64) -> c_int {
    let (_, _, g) = parts(file);
    if !g.bytes.is_empty() && offset != g.start + g.bytes.len() as i64 {
        let rc = flush(file);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
    }
    let (_, _, g) = parts(file);
    if g.bytes.is_empty() {
        g.start = offset;
    }
    let data = std::slice::from_raw_parts(buf.cast::<u8>(), amt as usize);
    g.bytes.extend_from_slice(data);
    let ends_commit = g.commit_page_next && data.len() != FRAME_HEADER;
    g.commit_page_next = data.len() == FRAME_HEADER && data[4..8] != [0; 4];
    if ends_commit || g.bytes.len() >= MAX_GATHERED {
        return flush(file);
    }
    ffi::SQLITE_OK
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    let written = flush(file);
    let (inner, m, _) = parts(file);
    let closed = m.xClose.expect("a file closes")(inner);
    drop(Box::from_raw((*file.cast::<WalFile>()).gathered));
    if written != ffi::SQLITE_OK {
        written
    } else {
        closed
    }
}

/// Forwards a call to the default VFS's file, after writing what is gathered.
macro_rules! forward {
    ($name:ident, $method:ident, ($($arg:ident: $ty:ty),*)) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file, $($arg: $ty),*) -> c_int {
            let rc = flush(file);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            let (inner, m, _) = parts(file);
            m.$method.expect(concat!("the default VFS has ", stringify!($method)))(inner, $($arg),*)
        }
    };
}

forward!(read, xRead, (buf: *mut c_void, amt: c_int, offset: i64));
forward!(truncate, xTruncate, (size: i64));
forward!(sync, xSync, (flags: c_int));
forward!(file_size, xFileSize, (size: *mut i64));
forward!(lock, xLock, (level: c_int));
forward!(unlock, xUnlock, (level: c_int));
forward!(check_reserved_lock, xCheckReservedLock, (out: *mut c_int));
forward!(file_control, xFileControl, (op: c_int, arg: *mut c_void));
forward!(shm_map, xShmMap, (region: c_int, size: c_int, extend: c_int, out: *mut *mut c_void));
forward!(shm_lock, xShmLock, (offset: c_int, n: c_int, flags: c_int));
forward!(shm_unmap, xShmUnmap, (delete: c_int));
forward!(fetch, xFetch, (offset: i64, amt: c_int, out: *mut *mut c_void));
forward!(unfetch, xUnfetch, (offset: i64, p: *mut c_void));

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    flush(file);
    let (inner, m, _) = parts(file);
    if let Some(barrier) = m.xShmBarrier {
        barrier(inner);
    }
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    let (inner, m, _) = parts(file);
    m.xSectorSize.expect("the default VFS has xSectorSize")(inner)
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    let (inner, m, _) = parts(file);
    m.xDeviceCharacteristics.expect("the default VFS has xDeviceCharacteristics")(inner)
}

#[cfg(test)]
#[path = "gathered_wal_tests.rs"]
mod tests;
