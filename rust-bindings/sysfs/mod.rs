// SPDX-License-Identifier: GPL-2.0-or-later

//! sysfs for RTRS and RNBD: device classes and their devices, directories
//! below them backed by kobjects that embed Rust data, attributes whose
//! `show`/`store` are Rust trait methods, symlinks and uevents.
//!
//! ```ignore
//! struct Ctl { /* ... */ }
//!
//! struct Add;
//! #[vtable]
//! impl Attribute for Add {
//!     type Data = Ctl;
//!     const NAME: &'static CStr = c_str!("add");
//!     const MODE: u16 = 0o200;
//!     fn store(ctl: &Ctl, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
//!         /* ... */
//!         Ok(input.len())
//!     }
//! }
//!
//! static CTL_ATTRS: Attributes<Ctl> = attributes!(Ctl: Add);
//!
//! let class = Class::new(c_str!("rb-test"))?;
//! let ctl = Device::new(&class, format_args!("ctl"), &CTL_ATTRS, Ctl { /* ... */ })?;
//! let items = Kobject::dir(&ctl, format_args!("items"))?;
//! ```
//!
//! See `Documentation/design/bindings.md`, "sysfs and module parameters",
//! for the lifetime rules.

mod attr;
mod device;
mod kobject;

pub(crate) use attr::verify_octal_permissions;
pub use attr::{
    AttrList, Attribute, Attributes, Dev, DevAttr, Group, Groups, Kobj, KobjAttr, KobjType, Page,
    Store,
};
pub use device::{Class, Device};
pub use kobject::{AsKobject, Kobject, Link, Uevent};

/// The [`Attributes`] of the objects whose data is a type, from the unit
/// structs implementing [`Attribute`] for it, in file order:
///
/// ```ignore
/// static PATH_ATTRS: Attributes<Path> = attributes!(Path: HcaName, State, RemovePath);
/// static NONE: Attributes<Stats> = attributes!(Stats);
/// ```
///
/// It builds the C tables (`struct device_attribute` and `struct
/// kobj_attribute` for each, their groups and the kobject type) as
/// statics, and checks each attribute's mode at build time.
#[macro_export]
macro_rules! attributes {
    ($data:ty $(: $($attr:ty),* $(,)?)?) => {{
        use $crate::sysfs as __sysfs;
        const NAMES: &[&str] = &[$($(stringify!($attr)),*)?];
        const N: usize = NAMES.len();
        static DEV: [__sysfs::DevAttr<$data>; N] = [$($(__sysfs::DevAttr::new::<$attr>()),*)?];
        static DEV_LIST: __sysfs::AttrList<$data, __sysfs::Dev, { N + 1 }> =
            __sysfs::AttrList::<$data, __sysfs::Dev, { N + 1 }>::new(&DEV);
        static DEV_GROUP: __sysfs::Group<$data, __sysfs::Dev> = __sysfs::Group::new(&DEV_LIST);
        static DEV_GROUPS: __sysfs::Groups<$data, __sysfs::Dev> = __sysfs::Groups::new(&DEV_GROUP);
        static KOBJ: [__sysfs::KobjAttr<$data>; N] = [$($(__sysfs::KobjAttr::new::<$attr>()),*)?];
        static KOBJ_LIST: __sysfs::AttrList<$data, __sysfs::Kobj, { N + 1 }> =
            __sysfs::AttrList::<$data, __sysfs::Kobj, { N + 1 }>::new(&KOBJ);
        static KOBJ_GROUP: __sysfs::Group<$data, __sysfs::Kobj> = __sysfs::Group::new(&KOBJ_LIST);
        static KOBJ_GROUPS: __sysfs::Groups<$data, __sysfs::Kobj> =
            __sysfs::Groups::new(&KOBJ_GROUP);
        static KTYPE: __sysfs::KobjType<$data> = __sysfs::KobjType::new(&KOBJ_GROUPS);
        __sysfs::Attributes::new(&DEV_GROUPS, &KTYPE)
    }};
}
pub use crate::attributes;
