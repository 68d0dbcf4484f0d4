// SPDX-License-Identifier: GPL-2.0-or-later

//! How many pages a client's memory registration maps on a device
//! (`query_fast_reg_mode()`).

/// `RTRS_MAX_SEGMENTS`: pages of one IO, at most.
pub const MAX_SEGMENTS: u32 = 128;

/// The pages one fast-registration MR of the client maps on a device with
/// these attributes (`page_size_cap`, `max_mr_size`,
/// `max_fast_reg_page_list_len`), as `query_fast_reg_mode()` computes it:
/// the device's smallest page, at least 4 KiB; as many of those as
/// `max_mr_size` holds, cut to 32 bits as C does (0 then means no limit);
/// and at most [`MAX_SEGMENTS`] and the device's fast-registration list.
/// 0 means the device cannot register a page: its MRs fail to allocate.
pub fn max_pages_per_mr(
    page_size_cap: u64,
    max_mr_size: u64,
    max_fast_reg_page_list_len: u32,
) -> u32 {
    // `max(12, ffs(page_size_cap) - 1)`: ffs() of 0 is 0.
    let ffs = if page_size_cap == 0 {
        0
    } else {
        page_size_cap.trailing_zeros() as i32 + 1
    };
    let shift = (ffs - 1).max(12) as u32;
    let by_size = match (max_mr_size >> shift) as u32 {
        0 => u32::MAX,
        n => n,
    };
    MAX_SEGMENTS.min(by_size).min(max_fast_reg_page_list_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_c_computes_it() {
        // rxe: 4 KiB pages and more, no MR size limit, 512 pages a list.
        assert_eq!(max_pages_per_mr(!0xfff, u64::MAX, 512), 128);
        // A device whose MRs hold 256 KiB of 4 KiB pages: 64.
        assert_eq!(max_pages_per_mr(0x1000, 256 << 10, 512), 64);
        // Smallest page 64 KiB: 1 MiB is 16 of them.
        assert_eq!(max_pages_per_mr(0x10000, 1 << 20, 512), 16);
        // Pages under 4 KiB count as 4 KiB.
        assert_eq!(max_pages_per_mr(0x200, 1 << 20, 512), 256.min(MAX_SEGMENTS));
        assert_eq!(max_pages_per_mr(0x200, 64 << 10, 512), 16);
        // The list is the limit.
        assert_eq!(max_pages_per_mr(0x1000, u64::MAX, 32), 32);
        // No page size given: 4 KiB.
        assert_eq!(max_pages_per_mr(0, 64 << 10, 512), 16);
        // A size under one page: C's (u32) 0 is no limit.
        assert_eq!(max_pages_per_mr(0x1000, 100, 512), 128);
        // A size whose page count is a multiple of 2^32: the cut is 0 too.
        assert_eq!(max_pages_per_mr(0x1000, 1 << 44, 512), 128);
        // A device without fast registration: nothing.
        assert_eq!(max_pages_per_mr(0x1000, u64::MAX, 0), 0);
    }
}
