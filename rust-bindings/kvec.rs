// SPDX-License-Identifier: GPL-2.0-or-later

//! What the 6.12 `KVec` lacks and RTRS needs: removing elements.

use kernel::alloc::{Allocator, Vec};

/// Element removal for the kernel's `Vec`.
pub trait VecExt<T> {
    /// Removes and returns the last element.
    fn pop(&mut self) -> Option<T>;
    /// Removes element `i`, moving the last one into its place.
    fn swap_remove(&mut self, i: usize) -> Option<T>;
    /// Removes element `i`, moving the ones after it down: the order stays.
    fn remove(&mut self, i: usize) -> Option<T>;
    /// Drops all elements from `len` on.
    fn truncate(&mut self, len: usize);
    /// Drops all elements.
    fn clear(&mut self) {
        self.truncate(0);
    }
    /// Keeps only the elements for which `keep` is true; drops the others.
    fn retain(&mut self, keep: impl FnMut(&T) -> bool);
}

impl<T, A: Allocator> VecExt<T> for Vec<T, A> {
    fn pop(&mut self) -> Option<T> {
        let len = self.len();
        if len == 0 {
            return None;
        }
        // SAFETY: element `len - 1` is initialised; shrinking the length
        // first hands its ownership to us, so it is never dropped twice.
        unsafe {
            self.set_len(len - 1);
            Some(core::ptr::read(self.as_ptr().add(len - 1)))
        }
    }

    fn swap_remove(&mut self, i: usize) -> Option<T> {
        let len = self.len();
        if i >= len {
            return None;
        }
        self.as_mut_slice().swap(i, len - 1);
        self.pop()
    }

    fn remove(&mut self, i: usize) -> Option<T> {
        if i >= self.len() {
            return None;
        }
        self.as_mut_slice()[i..].rotate_left(1);
        self.pop()
    }

    fn truncate(&mut self, len: usize) {
        while self.len() > len {
            drop(self.pop());
        }
    }

    fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        let mut i = 0;
        while i < self.len() {
            if keep(&self.as_slice()[i]) {
                i += 1;
            } else {
                // Order does not matter to our users; this is O(1).
                drop(self.swap_remove(i));
            }
        }
    }
}
