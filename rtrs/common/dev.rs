// SPDX-License-Identifier: GPL-2.0-or-later

//! The RDMA devices the paths of a module use, each with one PD and one
//! handler of its events, shared by every path on it (C's `rtrs_ib_dev`,
//! `rtrs_ib_dev_find_or_add()`, `rtrs_ib_dev_put()`).

use kernel::prelude::*;
use kernel::sync::{Arc, Mutex};
use rb::kvec::VecExt;
use rb_rdma::{Device, EventHandler, IbEvent, IbEventHandler, Pd};

/// Logs the events of a device (`rtrs_clt_ib_event_handler()`,
/// `rtrs_srv_ib_event_handler()`).
struct LogEvents;

impl IbEventHandler for LogEvents {
    fn event(&self, event: &IbEvent<'_>) {
        pr_info!("Handling event: {} ({}).\n", event.name(), event.code());
    }
}

/// A device in use: its PD and its event handler.
struct Entry {
    /// The device, by address: `pd` keeps it registered, so the address
    /// names it for as long as the entry exists.
    dev: usize,
    pd: Arc<Pd>,
    _events: Pin<KBox<EventHandler<LogEvents>>>,
    users: usize,
}

/// The devices a module's paths use.
///
/// # Locking
///
/// `devs` (a mutex: adding a device allocates a PD and registers a
/// handler, which sleep) is a leaf.
#[pin_data]
pub struct DevPool {
    #[pin]
    devs: Mutex<KVec<Entry>>,
}

impl DevPool {
    /// An empty pool.
    pub fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(DevPool {
                devs <- kernel::new_mutex!(KVec::new(), "rtrs_dev_pool"),
            }),
            GFP_KERNEL,
        )
    }

    /// The shared PD of `dev`, made with its event handler on first use
    /// after `check` accepted the device. The returned [`DevUse`] gives
    /// the use back when dropped. Sleeps.
    pub fn get(
        self: &Arc<Self>,
        dev: &Device,
        check: impl FnOnce(&Device) -> Result,
    ) -> Result<DevUse> {
        let key = core::ptr::from_ref(dev) as usize;
        let mut devs = self.devs.lock();
        if let Some(e) = devs.iter_mut().find(|e| e.dev == key) {
            e.users += 1;
            return Ok(DevUse {
                pool: self.clone(),
                dev: key,
                pd: e.pd.clone(),
            });
        }
        check(dev)?;
        let events = EventHandler::new(dev, LogEvents)?;
        let pd = Arc::new(Pd::new(dev, 0)?, GFP_KERNEL)?;
        devs.push(
            Entry {
                dev: key,
                pd: pd.clone(),
                _events: events,
                users: 1,
            },
            GFP_KERNEL,
        )?;
        Ok(DevUse {
            pool: self.clone(),
            dev: key,
            pd,
        })
    }

    fn put(&self, key: usize) {
        let gone = {
            let mut devs = self.devs.lock();
            let Some(i) = devs.iter().position(|e| e.dev == key) else {
                return;
            };
            devs[i].users -= 1;
            if devs[i].users > 0 {
                return;
            }
            devs.swap_remove(i)
        };
        // Outside the lock: unregistering the handler waits for a running
        // one, and the PD may go (freeing sleeps).
        drop(gone);
    }
}

/// A path's use of a device of a [`DevPool`]: its PD.
pub struct DevUse {
    pool: Arc<DevPool>,
    dev: usize,
    pd: Arc<Pd>,
}

impl DevUse {
    /// The device's shared PD.
    pub fn pd(&self) -> &Arc<Pd> {
        &self.pd
    }
}

impl Drop for DevUse {
    fn drop(&mut self) {
        self.pool.put(self.dev);
    }
}
