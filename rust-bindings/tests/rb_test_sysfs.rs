// SPDX-License-Identifier: GPL-2.0-or-later

//! Test module of `rb::sysfs` and `rb::param`, driven by the selftest
//! `rb_sysfs_params.sh`. It builds what RTRS and RNBD build:
//!
//! - the class `rb-test` with the device `ctl` (`/sys/class/rb-test/ctl`):
//!   `add` (write a name: creates `items/<name>/` and `links/<name>`),
//!   `nr_items`, `live` (the sysfs objects whose data is not freed yet),
//!   `lost_removals` (removals that lost a race) and `params` (the
//!   parameters as the module reads them);
//! - `ctl/items/<name>/` with `name`, `value` (an integer in -1000..=1000)
//!   and `remove` (write `1`: the item removes its own directory, as
//!   `remove_path` does), and `ctl/items/ctl`, a link back to `ctl`;
//! - `ctl/links/<name>`, a link to `ctl/items/<name>`;
//! - the parameters `enable` (bool), `count` (int), `limit` (uint), `port`
//!   (ushort) and `label` (a string of 1 to 32 characters, checked).

use core::fmt::Write;
use core::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use kernel::prelude::*;
use kernel::str::{BStr, CStr};
use kernel::sync::{Arc, Mutex};
use kernel::{c_str, new_mutex};

use rb::param::{
    module_param, BoolParam, IntParam, ParamLocked, ParamValue, StringParam, UintParam, UshortParam,
};
use rb::sysfs::{attributes, Attribute, Attributes, Class, Device, Kobject, Link, Page, Store};

module! {
    type: RbTestSysfs,
    name: "rb_test_sysfs",
    author: "rtrs-rs developers",
    description: "Test of the rust-bindings sysfs and module parameters",
    license: "GPL",
}

module_param! {
    /// A bool, writable at runtime.
    static ENABLE: BoolParam = BoolParam::new(false);
    name: enable, perm: 0o644, desc: "A bool (default: N)";
}

module_param! {
    /// An int, writable at runtime.
    static COUNT: IntParam = IntParam::new(-5);
    name: count, perm: 0o644, desc: "An int (default: -5)";
}

module_param! {
    /// A uint, read-only in sysfs.
    static LIMIT: UintParam = UintParam::new(100);
    name: limit, perm: 0o444, desc: "A uint (default: 100)";
}

module_param! {
    /// A ushort, read-only in sysfs.
    static PORT: UshortParam = UshortParam::new(1234);
    name: port, perm: 0o444, desc: "A ushort (default: 1234)";
}

module_param! {
    /// A checked string, writable at runtime.
    static LABEL: Label = Label(StringParam::new("default"));
    name: label, perm: 0o644, desc: "1 to 32 characters (default: default)";
}

/// The longest `label`.
const LABEL_MAX: usize = 32;

/// The `label` parameter: a string whose `set` rejects an empty or too long
/// value with `EINVAL` and drops a trailing newline (as rnbd-server's
/// `dev_search_path`).
struct Label(StringParam<{ LABEL_MAX + 1 }>);

impl ParamValue for Label {
    const TYPE: &'static str = "string";

    fn set(&self, val: Option<&CStr>, locked: &mut ParamLocked) -> Result {
        let v = trim_newline(val.ok_or(EINVAL)?.as_bytes());
        if v.is_empty() || v.len() > LABEL_MAX {
            pr_err!(
                "label: {} characters, must be 1 to {}\n",
                v.len(),
                LABEL_MAX
            );
            return Err(EINVAL);
        }
        self.0.store(v, locked)
    }

    fn get(&self, page: &mut Page<'_>, locked: &ParamLocked) -> Result {
        self.0.get(page, locked)
    }
}

/// `input` without one trailing newline.
fn trim_newline(input: &[u8]) -> &[u8] {
    input.strip_suffix(b"\n").unwrap_or(input)
}

/// Sysfs objects whose data is not freed yet: every data type below holds a
/// [`Counted`], so this drops back only when the kobject releases ran.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Stores of `remove` that lost the race to remove their item.
static LOST_REMOVALS: AtomicUsize = AtomicUsize::new(0);

/// One live sysfs object, counted in [`LIVE`].
struct Counted;

impl Counted {
    fn new() -> Self {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Counted
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The data of `ctl/items` and `ctl/links`: none but the count.
static DIR_ATTRS: Attributes<Counted> = attributes!(Counted);

/// An item and the link to it in `ctl/links`.
struct Entry {
    // Dropped first: the link goes before its target.
    _link: Link,
    item: Kobject<Item>,
}

/// The directories and the items, behind the lock of [`Items`].
struct ItemsState {
    dir: Option<Kobject<Counted>>,
    links: Option<Kobject<Counted>>,
    /// Free slots are `None`.
    entries: KVec<Option<Entry>>,
}

/// The items of `ctl`. Items are dropped outside the lock: dropping one
/// waits for running `show`/`store` calls of its attributes.
#[pin_data]
struct Items {
    #[pin]
    state: Mutex<ItemsState>,
}

impl Items {
    /// Creates the item `name` (validated by the caller).
    fn add(self: &Arc<Self>, name: &[u8]) -> Result {
        let shown = BStr::from_bytes(name);
        let data = Item {
            name: {
                let mut v = KVec::new();
                v.extend_from_slice(name, GFP_KERNEL)?;
                v
            },
            value: AtomicI32::new(0),
            items: self.clone(),
            _counted: Counted::new(),
        };
        let mut st = self.state.lock();
        if st.entries.iter().flatten().any(|e| e.item.name == name) {
            return Err(EEXIST);
        }
        let (Some(dir), Some(links)) = (&st.dir, &st.links) else {
            return Err(ENODEV);
        };
        // A failure below drops the new item under the lock: nothing of it
        // can wait for the lock (its `remove` removed its own file first).
        let item = Kobject::new(dir, format_args!("{shown}"), &ITEM_ATTRS, data)?;
        let link = Link::new(links, &item, format_args!("{shown}"))?;
        let entry = Some(Entry { _link: link, item });
        match st.entries.iter().position(Option::is_none) {
            Some(i) => st.entries[i] = entry,
            None => st.entries.push(entry, GFP_KERNEL)?,
        }
        Ok(())
    }

    /// Removes the item `name`: `ENOENT` if there is none.
    fn remove(&self, name: &[u8]) -> Result {
        let entry = {
            let mut st = self.state.lock();
            let slot = st
                .entries
                .iter_mut()
                .find(|e| e.as_ref().is_some_and(|e| e.item.name == name))
                .ok_or(ENOENT)?;
            slot.take()
        };
        drop(entry);
        Ok(())
    }

    fn count(&self) -> usize {
        self.state.lock().entries.iter().flatten().count()
    }

    /// Removes all items, then the directories.
    fn clear(&self) {
        let (entries, links, dir) = {
            let mut st = self.state.lock();
            (
                core::mem::take(&mut st.entries),
                st.links.take(),
                st.dir.take(),
            )
        };
        drop(entries);
        drop(links);
        drop(dir);
    }
}

/// The data of `ctl/items/<name>`.
struct Item {
    name: KVec<u8>,
    value: AtomicI32,
    items: Arc<Items>,
    _counted: Counted,
}

/// `ctl/items/<name>/name`.
struct ItemName;

#[vtable]
impl Attribute for ItemName {
    type Data = Item;
    const NAME: &'static CStr = c_str!("name");
    const MODE: u16 = 0o444;

    fn show(item: &Item, page: &mut Page<'_>) -> Result {
        page.write_bytes(&item.name)?;
        Ok(page.write_str("\n")?)
    }
}

/// The range of `value`.
const VALUE_RANGE: core::ops::RangeInclusive<i32> = -1000..=1000;

/// `ctl/items/<name>/value`: an integer in [`VALUE_RANGE`].
struct ItemValue;

#[vtable]
impl Attribute for ItemValue {
    type Data = Item;
    const NAME: &'static CStr = c_str!("value");
    const MODE: u16 = 0o644;

    fn show(item: &Item, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", item.value.load(Ordering::Relaxed))?)
    }

    fn store(item: &Item, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        let v = core::str::from_utf8(trim_newline(input))
            .ok()
            .and_then(|s| s.parse::<i32>().ok())
            .filter(|v| VALUE_RANGE.contains(v))
            .ok_or(EINVAL)?;
        item.value.store(v, Ordering::Relaxed);
        Ok(input.len())
    }
}

/// `ctl/items/<name>/remove`: write `1` to remove the item.
struct ItemRemove;

#[vtable]
impl Attribute for ItemRemove {
    type Data = Item;
    const NAME: &'static CStr = c_str!("remove");
    const MODE: u16 = 0o200;

    fn store(item: &Item, input: &[u8], ctx: &mut Store<'_>) -> Result<usize> {
        if trim_newline(input) != b"1" {
            return Err(EINVAL);
        }
        if let Err(e) = ctx.remove_self() {
            LOST_REMOVALS.fetch_add(1, Ordering::Relaxed);
            return Err(e);
        }
        item.items.remove(&item.name)?;
        Ok(input.len())
    }
}

static ITEM_ATTRS: Attributes<Item> = attributes!(Item: ItemName, ItemValue, ItemRemove);

/// The data of `ctl`.
struct Ctl {
    items: Arc<Items>,
    _counted: Counted,
}

/// `ctl/add`: write a name to create an item.
struct CtlAdd;

/// The longest item name.
const NAME_MAX: usize = 32;

#[vtable]
impl Attribute for CtlAdd {
    type Data = Ctl;
    const NAME: &'static CStr = c_str!("add");
    const MODE: u16 = 0o644;

    fn show(_ctl: &Ctl, page: &mut Page<'_>) -> Result {
        Ok(writeln!(
            page,
            "Usage: echo <name: 1 to {NAME_MAX} of [A-Za-z0-9_-]> > {}",
            Self::NAME
        )?)
    }

    fn store(ctl: &Ctl, input: &[u8], _ctx: &mut Store<'_>) -> Result<usize> {
        let name = trim_newline(input);
        let valid = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'-';
        if name.is_empty() || name.len() > NAME_MAX || !name.iter().all(valid) {
            return Err(EINVAL);
        }
        ctl.items.add(name)?;
        Ok(input.len())
    }
}

/// `ctl/nr_items`.
struct CtlNrItems;

#[vtable]
impl Attribute for CtlNrItems {
    type Data = Ctl;
    const NAME: &'static CStr = c_str!("nr_items");
    const MODE: u16 = 0o444;

    fn show(ctl: &Ctl, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", ctl.items.count())?)
    }
}

/// `ctl/live`: [`LIVE`].
struct CtlLive;

#[vtable]
impl Attribute for CtlLive {
    type Data = Ctl;
    const NAME: &'static CStr = c_str!("live");
    const MODE: u16 = 0o444;

    fn show(_ctl: &Ctl, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", LIVE.load(Ordering::Relaxed))?)
    }
}

/// `ctl/lost_removals`: [`LOST_REMOVALS`].
struct CtlLostRemovals;

#[vtable]
impl Attribute for CtlLostRemovals {
    type Data = Ctl;
    const NAME: &'static CStr = c_str!("lost_removals");
    const MODE: u16 = 0o444;

    fn show(_ctl: &Ctl, page: &mut Page<'_>) -> Result {
        Ok(writeln!(page, "{}", LOST_REMOVALS.load(Ordering::Relaxed))?)
    }
}

/// `ctl/params`: the parameters as the module reads them.
struct CtlParams;

#[vtable]
impl Attribute for CtlParams {
    type Data = Ctl;
    const NAME: &'static CStr = c_str!("params");
    const MODE: u16 = 0o444;

    fn show(_ctl: &Ctl, page: &mut Page<'_>) -> Result {
        writeln!(page, "enable={}", if ENABLE.value() { "Y" } else { "N" })?;
        writeln!(page, "count={}", COUNT.value())?;
        writeln!(page, "limit={}", LIMIT.value())?;
        writeln!(page, "port={}", PORT.value())?;
        page.write_str("label=")?;
        LABEL.0.read(|label| page.write_bytes(label))?;
        Ok(page.write_str("\n")?)
    }
}

static CTL_ATTRS: Attributes<Ctl> =
    attributes!(Ctl: CtlAdd, CtlNrItems, CtlLive, CtlLostRemovals, CtlParams);

struct RbTestSysfs {
    items: Arc<Items>,
    back_link: Option<Link>,
    ctl: Option<Device<Ctl>>,
    _class: Arc<Class>,
}

impl kernel::Module for RbTestSysfs {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        LABEL.0.read(|label| {
            pr_info!(
                "params: enable={} count={} limit={} port={} label={}\n",
                ENABLE.value(),
                COUNT.value(),
                LIMIT.value(),
                PORT.value(),
                BStr::from_bytes(label)
            )
        });
        let class = Class::new(c_str!("rb-test"))?;
        let items = Arc::pin_init(
            pin_init!(Items {
                state <- new_mutex!(ItemsState {
                    dir: None,
                    links: None,
                    entries: KVec::new(),
                }),
            }),
            GFP_KERNEL,
        )?;
        let ctl = Device::new_quiet(
            &class,
            format_args!("ctl"),
            &CTL_ATTRS,
            Ctl {
                items: items.clone(),
                _counted: Counted::new(),
            },
        )?;
        let dir = Kobject::new(&ctl, format_args!("items"), &DIR_ATTRS, Counted::new())?;
        let links = Kobject::new(&ctl, format_args!("links"), &DIR_ATTRS, Counted::new())?;
        let back_link = Link::new(&dir, &ctl, format_args!("ctl"))?;
        {
            let mut st = items.state.lock();
            st.dir = Some(dir);
            st.links = Some(links);
        }
        if let Err(e) = ctl.announce() {
            drop(back_link);
            items.clear();
            return Err(e);
        }
        Ok(Self {
            items,
            back_link: Some(back_link),
            ctl: Some(ctl),
            _class: class,
        })
    }
}

impl Drop for RbTestSysfs {
    fn drop(&mut self) {
        self.back_link = None;
        self.items.clear();
        self.ctl = None;
        pr_info!("exit: {} live objects\n", LIVE.load(Ordering::Relaxed));
    }
}
