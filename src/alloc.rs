//! The allocator (Linux): jemalloc, with transparent huge pages for large blocks only.
//!
//! A large fabric's state (ports, routing rows, the packet slab, per-flow state, the event
//! queue) is read at random, so with 4 KiB pages many of those reads also miss the TLB.
//! Backing every jemalloc arena with huge pages (`opt.thp` "always") measured 0.75-0.83 of
//! the CPU time on P1024 and 0.80 on P8192 (`benches/README.md`), but it rounds each of
//! jemalloc's small-size arenas up to 2 MiB pages: a 128-host run held 24-63 MB, where its
//! data needs 12-30 MB. So jemalloc keeps its default pages, and each block of at least
//! [`HUGE`] (where the big arrays live) is advised `MADV_HUGEPAGE` (madvise(2)) when it is
//! allocated or grown (before a moved block's contents are copied into it): the kernel backs
//! it with huge pages in its `madvise` and `always` modes, and a kernel without THP ignores
//! the advice. Other platforms use the system allocator unchanged.

use std::alloc::{GlobalAlloc, Layout};

/// Blocks this large or larger get huge pages: one huge page.
const HUGE: usize = 2 << 20;

/// The alignment every jemalloc block has on the 64-bit targets (its `MALLOCX_ALIGN` flag is
/// needed only above it, or for blocks smaller than their alignment).
const MIN_ALIGN: usize = 16;

/// jemalloc, advising huge pages on large blocks.
pub struct Alloc;

#[global_allocator]
static ALLOC: Alloc = Alloc;

static JE: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Ask for huge pages on the whole 2 MiB pages inside `[ptr, ptr + size)`.
#[inline]
fn advise(ptr: *mut u8, size: usize) {
    if size < HUGE || ptr.is_null() {
        return;
    }
    let start = (ptr as usize).next_multiple_of(HUGE);
    let end = (ptr as usize + size) & !(HUGE - 1);
    if end > start {
        // SAFETY: the range lies inside a block this allocator just handed out; madvise with
        // MADV_HUGEPAGE changes only how the kernel backs it, never its contents.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

// SAFETY: every call is jemalloc's, with the same arguments; `advise` only adds a hint.
unsafe impl GlobalAlloc for Alloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { JE.alloc(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { JE.alloc_zeroed(layout) };
        advise(p, layout.size());
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { JE.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size < HUGE || new_size <= layout.size() {
            return unsafe { JE.realloc(ptr, layout, new_size) };
        }
        // jemalloc's realloc of a block it cannot grow in place copies the contents into the
        // new block before returning it, so the advice would come after the copied part was
        // already on small pages (the first half of every doubling vector: the packet slab,
        // the event queue's buckets). Grow in place, or advise the new block before copying.
        let flags = align_flags(layout);
        // SAFETY: `ptr` is a live jemalloc block of `layout`; xallocx only resizes it in
        // place (returning its real size) and moves nothing.
        if unsafe { tikv_jemalloc_sys::xallocx(ptr.cast(), new_size, 0, flags) } >= new_size {
            advise(ptr, new_size);
            return ptr;
        }
        // SAFETY: GlobalAlloc::realloc's own default (a new block of the new size and the
        // same alignment, the old contents copied, the old block freed), advised in between.
        unsafe {
            let p = JE.alloc(Layout::from_size_align_unchecked(new_size, layout.align()));
            if !p.is_null() {
                advise(p, new_size);
                std::ptr::copy_nonoverlapping(ptr, p, layout.size());
                JE.dealloc(ptr, layout);
            }
            p
        }
    }
}

/// jemalloc's flags for a block of `layout`: its alignment when above what every block
/// has (`MALLOCX_LG_ALIGN`, jemalloc(3)).
fn align_flags(layout: Layout) -> libc::c_int {
    if layout.align() <= MIN_ALIGN && layout.align() <= layout.size() {
        0
    } else {
        layout.align().trailing_zeros() as libc::c_int
    }
}

/// Give the pages of freed memory back to the kernel now. jemalloc keeps a freed page for
/// reuse until it has stayed unused for `opt.dirty_decay_ms` (10 s by default), so the large
/// state a finished simulation frees (its packet slab, event queue, fabric) would stay
/// resident under the report and the outputs built next. Called once at each of those
/// points: `arena.<MALLCTL_ARENAS_ALL>.purge` (jemalloc(3); MALLCTL_ARENAS_ALL is 4096).
pub fn give_back() {
    use std::ptr::null_mut;
    // SAFETY: a NUL-terminated control name jemalloc defines; purge reads and writes nothing.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"arena.4096.purge".as_ptr(),
            null_mut(),
            null_mut(),
            null_mut(),
            0,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way `realloc` goes (small, shrunk, grown past `HUGE` in place or moved) keeps
    /// the contents and the alignment, whatever the alignment.
    #[test]
    fn realloc_keeps_contents_and_alignment() {
        for align in [8, 16, 64, 4096, HUGE] {
            for (from, to) in [
                (1000, 5000),
                (1 << 20, 3 << 20),
                (3 << 20, 9 << 20),
                (9 << 20, 1 << 20),
                (HUGE, HUGE + 1),
            ] {
                let layout = Layout::from_size_align(from, align).unwrap();
                // SAFETY: a block of `layout` from this allocator, written and read within
                // its size, resized once and freed with its final layout.
                unsafe {
                    let p = ALLOC.alloc(layout);
                    assert!(!p.is_null());
                    for i in 0..from {
                        *p.add(i) = (i % 251) as u8;
                    }
                    let q = ALLOC.realloc(p, layout, to);
                    assert!(!q.is_null());
                    assert_eq!(q as usize % align, 0, "align {align}, {from} -> {to}");
                    for i in 0..from.min(to) {
                        assert_eq!(*q.add(i), (i % 251) as u8, "byte {i}, {from} -> {to}");
                    }
                    *q.add(to - 1) = 7; // the new size is usable
                    ALLOC.dealloc(q, Layout::from_size_align(to, align).unwrap());
                }
            }
        }
    }
}
