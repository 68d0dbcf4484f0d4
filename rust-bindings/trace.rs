// SPDX-License-Identifier: GPL-2.0-or-later

//! Trace events (tracepoints) defined in C and fired from Rust, as the
//! kernel crate's `declare_trace!` of later kernels does.
//!
//! A module defines its events with `TRACE_EVENT()` in a C header, as any
//! driver, and gives each event `<name>` two one-line shims around the
//! static inlines that `TRACE_EVENT()` generates:
//!
//! ```c
//! void rb_trace_<name>(<args>) { trace_<name>(<args>); }
//! bool rb_trace_<name>_enabled(void) { return trace_<name>_enabled(); }
//! ```
//!
//! [`declare_trace!`] declares the Rust side: `<name>(args)` fires the
//! event, `<name>_enabled()` says whether anyone listens, so that a caller
//! computes costly arguments only then. The arguments are plain values
//! ([`TraceArg`]), which the event copies into its record while it runs:
//! nothing is kept.

use kernel::str::CStr;

mod private {
    pub trait Sealed {}
}

/// A value that a trace event takes as its C type: integers, `bool`, and
/// strings as `const char *`, read (copied into the record) only while the
/// event runs. Sealed: only these, whose C types are known, are passed.
pub trait TraceArg: private::Sealed {
    /// The C type of the shim's parameter.
    type C;
    /// The value as C takes it.
    fn to_c(self) -> Self::C;
}

macro_rules! trace_arg_as_is {
    ($($t:ty),*) => {$(
        impl private::Sealed for $t {}
        impl TraceArg for $t {
            type C = $t;
            #[inline]
            fn to_c(self) -> $t {
                self
            }
        }
    )*};
}
trace_arg_as_is!(bool, u8, u16, u32, u64, i32, i64, usize);

impl private::Sealed for &CStr {}
impl TraceArg for &CStr {
    type C = *const kernel::ffi::c_char;
    #[inline]
    fn to_c(self) -> Self::C {
        self.as_char_ptr()
    }
}

/// Declares trace events defined in C (see the module documentation):
///
/// ```ignore
/// rb::declare_trace! {
///     /// C's `rtrs_clt_close_conns`.
///     pub(crate) fn rtrs_clt_close_conns(state: i32, sessname: &CStr);
/// }
/// ```
///
/// gives `rtrs_clt_close_conns(..)` and `rtrs_clt_close_conns_enabled()`,
/// calling `rb_trace_rtrs_clt_close_conns` and
/// `rb_trace_rtrs_clt_close_conns_enabled` of the module's C file.
///
/// The declaration is the contract, as for any `extern` declaration: the C
/// shim takes exactly these parameters, each the [`TraceArg::C`] of the
/// Rust type, in this order, and nothing checks it but the review of the
/// declaration beside its `.c` file (the kernel's own `declare_trace!`
/// makes the functions `unsafe` for that reason; ours keeps them safe so
/// that modules which allow no `unsafe` can fire events, and is meant for
/// declarations kept beside their shims).
#[macro_export]
macro_rules! declare_trace {
    ($($(#[$attr:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {$(
        ::kernel::macros::paste! {
            $(#[$attr])*
            #[inline]
            #[allow(unsafe_code)]
            $vis fn $name($($arg: $ty),*) {
                extern "C" {
                    fn [<rb_trace_ $name>]($($arg: <$ty as $crate::trace::TraceArg>::C),*);
                }
                // SAFETY: the shim has this signature (the declaration's
                // contract) and hands plain values and strings that outlive
                // the call, which the event copies, to `trace_<name>()`.
                unsafe { [<rb_trace_ $name>]($($crate::trace::TraceArg::to_c($arg)),*) }
            }

            /// Whether the event is enabled (C's `trace_<name>_enabled()`).
            #[inline]
            #[allow(unsafe_code, dead_code)]
            $vis fn [<$name _enabled>]() -> bool {
                extern "C" {
                    fn [<rb_trace_ $name _enabled>]() -> bool;
                }
                // SAFETY: the shim takes nothing and reads a static key.
                unsafe { [<rb_trace_ $name _enabled>]() }
            }
        }
    )*};
}
pub use crate::declare_trace;
