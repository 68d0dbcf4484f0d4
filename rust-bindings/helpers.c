// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * C shims for what bindgen cannot bind: static inline functions and
 * function-like macros. One line each, no logic. Bound to Rust by a bindgen
 * run over this file (see ../Kbuild), with the rb_helper_ prefix removed.
 * Every module links a private copy (helpers-<module>.o), so KBUILD_MODNAME
 * below is the calling module's.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/rcupdate.h>
#include <linux/netdevice.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/jiffies.h>
#include <linux/timekeeping.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

/* linux/rcupdate.h */

void rb_helper_rcu_read_lock(void) { rcu_read_lock(); }

void rb_helper_rcu_read_unlock(void) { rcu_read_unlock(); }

/* linux/sched.h */

struct task_struct *rb_helper_get_current(void) { return current; }

/* linux/wait.h */

bool rb_helper_wq_has_sleeper(struct wait_queue_head *wq_head) { return wq_has_sleeper(wq_head); }

/* rdma/rdma_cm.h */

struct rdma_cm_id *rb_helper_rdma_create_id(struct net *net, rdma_cm_event_handler event_handler,
					    void *context, enum rdma_ucm_port_space ps,
					    enum ib_qp_type qp_type)
{ return rdma_create_id(net, event_handler, context, ps, qp_type); }

/* rdma/ib_verbs.h */

bool rb_helper_ib_device_try_get(struct ib_device *dev) { return ib_device_try_get(dev); }

struct ib_pd *rb_helper_ib_alloc_pd(struct ib_device *device, unsigned int flags)
{ return ib_alloc_pd(device, flags); }

void rb_helper_ib_dealloc_pd(struct ib_pd *pd) { ib_dealloc_pd(pd); }

struct ib_cq *rb_helper_ib_alloc_cq(struct ib_device *dev, void *private, int nr_cqe,
				    int comp_vector, enum ib_poll_context poll_ctx)
{ return ib_alloc_cq(dev, private, nr_cqe, comp_vector, poll_ctx); }

int rb_helper_ib_destroy_qp(struct ib_qp *qp) { return ib_destroy_qp(qp); }

int rb_helper_ib_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			   const struct ib_send_wr **bad_wr)
{ return ib_post_send(qp, wr, bad_wr); }

int rb_helper_ib_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
			   const struct ib_recv_wr **bad_wr)
{ return ib_post_recv(qp, wr, bad_wr); }

int rb_helper_ib_dereg_mr(struct ib_mr *mr) { return ib_dereg_mr(mr); }

void rb_helper_ib_update_fast_reg_key(struct ib_mr *mr, u8 newkey)
{ ib_update_fast_reg_key(mr, newkey); }

u64 rb_helper_ib_dma_map_single(struct ib_device *dev, void *cpu_addr, size_t size,
				enum dma_data_direction direction)
{ return ib_dma_map_single(dev, cpu_addr, size, direction); }

void rb_helper_ib_dma_unmap_single(struct ib_device *dev, u64 addr, size_t size,
				   enum dma_data_direction direction)
{ ib_dma_unmap_single(dev, addr, size, direction); }

int rb_helper_ib_dma_mapping_error(struct ib_device *dev, u64 dma_addr)
{ return ib_dma_mapping_error(dev, dma_addr); }

int rb_helper_ib_dma_map_sg(struct ib_device *dev, struct scatterlist *sg, int nents,
			    enum dma_data_direction direction)
{ return ib_dma_map_sg(dev, sg, nents, direction); }

void rb_helper_ib_dma_unmap_sg(struct ib_device *dev, struct scatterlist *sg, int nents,
			       enum dma_data_direction direction)
{ ib_dma_unmap_sg(dev, sg, nents, direction); }

void rb_helper_ib_dma_sync_single_for_cpu(struct ib_device *dev, u64 addr, size_t size,
					  enum dma_data_direction dir)
{ ib_dma_sync_single_for_cpu(dev, addr, size, dir); }

void rb_helper_ib_dma_sync_single_for_device(struct ib_device *dev, u64 addr, size_t size,
					     enum dma_data_direction dir)
{ ib_dma_sync_single_for_device(dev, addr, size, dir); }

/* linux/gfp.h, linux/mm.h, linux/scatterlist.h */

struct page *rb_helper_alloc_pages(gfp_t gfp, unsigned int order) { return alloc_pages(gfp, order); }

void *rb_helper_page_address(const struct page *page) { return page_address(page); }

void rb_helper_sg_set_page(struct scatterlist *sg, struct page *page, unsigned int len,
			   unsigned int offset)
{ sg_set_page(sg, page, len, offset); }

void rb_helper_sg_set_buf(struct scatterlist *sg, const void *buf, unsigned int buflen)
{ sg_set_buf(sg, buf, buflen); }

dma_addr_t rb_helper_sg_dma_address(struct scatterlist *sg) { return sg_dma_address(sg); }

unsigned int rb_helper_sg_dma_len(struct scatterlist *sg) { return sg_dma_len(sg); }

/* linux/spinlock.h */

void rb_helper_spin_lock_bh(spinlock_t *lock) { spin_lock_bh(lock); }

void rb_helper_spin_unlock_bh(spinlock_t *lock) { spin_unlock_bh(lock); }

/* The lock of this module's `Global` cells (rust-bindings/global.rs). */
static DEFINE_SPINLOCK(rb_global_lock);

void rb_helper_global_lock(void) { spin_lock(&rb_global_lock); }

void rb_helper_global_unlock(void) { spin_unlock(&rb_global_lock); }

/* linux/kernel.h */

void rb_helper_might_sleep(void) { might_sleep(); }

/* linux/netdevice.h */

void rb_helper_dev_put(struct net_device *dev) { dev_put(dev); }

/* linux/spinlock.h: irqsave */

unsigned long rb_helper_spin_lock_irqsave(spinlock_t *lock)
{ unsigned long flags; spin_lock_irqsave(lock, flags); return flags; }

void rb_helper_spin_unlock_irqrestore(spinlock_t *lock, unsigned long flags)
{ spin_unlock_irqrestore(lock, flags); }

/* linux/workqueue.h */

void rb_helper_init_delayed_work(struct delayed_work *dwork, work_func_t func,
				 const char *name, struct lock_class_key *key)
{
	INIT_DELAYED_WORK(dwork, func);
#ifdef CONFIG_LOCKDEP
	lockdep_init_map(&dwork->work.lockdep_map, name, key, 0);
#endif
}

unsigned long rb_helper_msecs_to_jiffies(unsigned int m) { return msecs_to_jiffies(m); }

bool rb_helper_queue_delayed_work(struct workqueue_struct *wq, struct delayed_work *dwork,
				  unsigned long delay)
{ return queue_delayed_work(wq, dwork, delay); }

/* linux/timekeeping.h */

u64 rb_helper_ktime_get_coarse_ns(void) { return ktime_get_coarse_ns(); }

/* linux/smp.h */

unsigned int rb_helper_raw_smp_processor_id(void) { return raw_smp_processor_id(); }

/* linux/device.h */

void rb_helper_dev_set_uevent_suppress(struct device *dev, int val)
{ dev_set_uevent_suppress(dev, val); }

/* linux/blkdev.h, linux/bio.h: rust-bindings/block/ */

#include <linux/bio.h>
#include <linux/blkdev.h>

sector_t rb_helper_bdev_nr_sectors(struct block_device *bdev) { return bdev_nr_sectors(bdev); }

unsigned int rb_helper_bdev_logical_block_size(struct block_device *bdev)
{ return bdev_logical_block_size(bdev); }

unsigned int rb_helper_bdev_physical_block_size(struct block_device *bdev)
{ return bdev_physical_block_size(bdev); }

unsigned int rb_helper_bdev_max_segments(struct block_device *bdev) { return bdev_max_segments(bdev); }

unsigned int rb_helper_bdev_max_hw_sectors(struct block_device *bdev)
{ return queue_max_hw_sectors(bdev_get_queue(bdev)); }

unsigned int rb_helper_bdev_write_zeroes_sectors(struct block_device *bdev)
{ return bdev_write_zeroes_sectors(bdev); }

unsigned int rb_helper_bdev_max_discard_sectors(struct block_device *bdev)
{ return bdev_max_discard_sectors(bdev); }

unsigned int rb_helper_bdev_discard_granularity(struct block_device *bdev)
{ return bdev_discard_granularity(bdev); }

unsigned int rb_helper_bdev_max_secure_erase_sectors(struct block_device *bdev)
{ return bdev_max_secure_erase_sectors(bdev); }

bool rb_helper_bdev_write_cache(struct block_device *bdev) { return bdev_write_cache(bdev); }

bool rb_helper_bdev_fua(struct block_device *bdev) { return bdev_fua(bdev); }

bool rb_helper_bdev_nonrot(struct block_device *bdev) { return bdev_nonrot(bdev); }

int rb_helper_bdev_name(struct block_device *bdev, char *buf, size_t len)
{ return snprintf(buf, len, "%pg", bdev); }

struct kobject *rb_helper_bdev_disk_kobj(struct block_device *bdev)
{ return &disk_to_dev(bdev->bd_disk)->kobj; }

struct bio *rb_helper_bio_alloc(struct block_device *bdev, unsigned short nr_vecs, blk_opf_t opf,
				gfp_t gfp)
{ return bio_alloc(bdev, nr_vecs, opf, gfp); }

/* linux/blk-mq.h, linux/blkdev.h: rust-bindings/block/ (client side) */

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/completion.h>

unsigned int rb_helper_num_online_cpus(void) { return num_online_cpus(); }

int rb_helper_blk_rq_map_sg(struct request_queue *q, struct request *rq, struct scatterlist *sgl)
{ return blk_rq_map_sg(q, rq, sgl); }

void rb_helper_sg_mark_end(struct scatterlist *sg) { sg_mark_end(sg); }

unsigned short rb_helper_blk_rq_nr_phys_segments(struct request *rq)
{ return blk_rq_nr_phys_segments(rq); }

struct gendisk *rb_helper_blk_mq_alloc_disk(struct blk_mq_tag_set *set, struct queue_limits *lim,
					    void *queuedata)
{ return blk_mq_alloc_disk(set, lim, queuedata); }

struct kobject *rb_helper_disk_kobj(struct gendisk *disk) { return &disk_to_dev(disk)->kobj; }

bool rb_helper_get_disk_ro(struct gendisk *disk) { return get_disk_ro(disk); }

sector_t rb_helper_get_capacity(struct gendisk *disk) { return get_capacity(disk); }

int rb_helper_register_blkdev(unsigned int major, const char *name)
{ return register_blkdev(major, name); }

void rb_helper_init_completion(struct completion *c) { init_completion(c); }

unsigned short rb_helper_req_get_ioprio(struct request *rq) { return req_get_ioprio(rq); }
