//! f32 buffers on 64-byte (cache-line) boundaries: the packed kernels load
//! 16 floats at a time from the weights' panels, and from a `Vec<f32>`
//! (16-byte aligned by the allocator) every such load spans two cache
//! lines, which cost about a tenth of a product (docs/performance.md,
//! session 14).
use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A cache line.
const LINE: usize = 64;

/// A fixed-capacity, zero-initialised, line-aligned `[f32]` (see the module).
pub struct AlignedBuf {
    ptr: NonNull<f32>,
    len: usize,
    /// Floats allocated (all initialised).
    cap: usize,
}

// Safety: it owns its memory like a `Vec<f32>`.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// `len` zeros.
    pub fn zeroed(len: usize) -> Self {
        let Some(layout) = layout(len) else {
            return AlignedBuf { ptr: NonNull::dangling(), len, cap: len };
        };
        // Safety: `layout` has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr.cast::<f32>()).unwrap_or_else(|| handle_alloc_error(layout));
        AlignedBuf { ptr, len, cap: layout.size() / 4 }
    }

    /// A copy of `v`.
    pub fn from_slice(v: &[f32]) -> Self {
        let mut b = AlignedBuf::zeroed(v.len());
        b.copy_from_slice(v);
        b
    }

    /// `len` floats: the first ones kept while they fit the allocation,
    /// all of them zero after a reallocation (callers write before reading).
    pub fn resize(&mut self, len: usize) {
        if len <= self.cap {
            self.len = len;
        } else {
            *self = AlignedBuf::zeroed(len);
        }
    }
}

/// The allocation for `len` floats (none for zero).
fn layout(len: usize) -> Option<Layout> {
    let bytes = len.checked_mul(4).expect("AlignedBuf: size overflows");
    (bytes > 0).then(|| Layout::from_size_align(bytes, LINE).expect("AlignedBuf: size overflows"))
}

impl Default for AlignedBuf {
    fn default() -> Self {
        AlignedBuf::zeroed(0)
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if let Some(layout) = layout(self.cap) {
            // Safety: allocated in `zeroed` with this layout (`cap` gives it back).
            unsafe { dealloc(self.ptr.as_ptr().cast(), layout) }
        }
    }
}

impl Deref for AlignedBuf {
    type Target = [f32];
    fn deref(&self) -> &[f32] {
        // Safety: `len` ≤ `cap` initialised floats.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [f32] {
        // Safety: as `deref`, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_zeroed_aligned_and_resizable() {
        for len in [0, 1, 1000, 1 << 20, (1 << 20) + 3] {
            let mut b = AlignedBuf::zeroed(len);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&v| v == 0.0));
            assert!(len == 0 || (b.as_ptr() as usize).is_multiple_of(LINE), "{len} floats");
            b.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
            // Shrinking and growing within the allocation keeps the values.
            b.resize(len / 2);
            b.resize(len);
            assert!(b.iter().enumerate().all(|(i, &v)| v == i as f32));
            // Past it: a new buffer, zeroed.
            b.resize(len + 1);
            assert_eq!(b.len(), len + 1);
            assert!(b.iter().all(|&v| v == 0.0));
        }
        let v: Vec<f32> = (0..5000).map(|i| i as f32 * 0.5).collect();
        assert_eq!(&*AlignedBuf::from_slice(&v), v.as_slice());
    }
}
