/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Userspace stand-ins for the kernel types, macros and calls that the
 * Linux 6.12 definitions listed in fuzz/oracle/functions use. Hand-written,
 * no kernel logic: fuzz/build.rs extracts those definitions verbatim from
 * the kernel sources into OUT_DIR/kernel.c, after an #include of this
 * file, and compiles them with glue.c (the oracle_*() entry points that
 * fuzz/src/lib.rs calls). Built with -fwrapv, as the kernel builds with
 * -fno-strict-overflow.
 */
#ifndef RTRS_FUZZ_ORACLE_SHIM_H
#define RTRS_FUZZ_ORACLE_SHIM_H

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

/*
 * The kernel's own string and ctype functions, not glibc's. memcmp() too:
 * strnstr() calls it at every offset of its 4 KiB buffer, and libFuzzer
 * hooks glibc's (recording each comparison), which made rnbd_full_path_c
 * 15 times slower.
 */
#define memcmp kernel_memcmp
#define strncasecmp kernel_strncasecmp
#define strsep kernel_strsep
#define isdigit kernel_isdigit

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int16_t s16;
typedef uint16_t __be16;
typedef uint32_t __be32;
typedef uint64_t __be64;
typedef unsigned short __kernel_sa_family_t;

/* include/linux/compiler*.h, kernel.h, minmax.h, array_size.h */
#define noinline
#define __visible
#define unlikely(x) (x)
#define likely(x) (x)
#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define pr_err(...) do { } while (0)
#define pr_info(...) do { } while (0)

/* include/linux/math64.h */
static inline u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

/* include/asm-generic/byteorder.h */
#define cpu_to_be16(x) htobe16(x)
#define cpu_to_be64(x) htobe64(x)

/* include/linux/ctype.h: the macros over lib/ctype.c's _ctype[] */
#define _U	0x01
#define _L	0x02
#define _D	0x04
#define _C	0x08
#define _P	0x10
#define _S	0x20
#define _X	0x40
#define _SP	0x80
extern const unsigned char _ctype[];
#define __ismask(x) (_ctype[(int)(unsigned char)(x)])
#define isspace(c)	((__ismask(c)&(_S)) != 0)
#define isupper(c)	((__ismask(c)&(_U)) != 0)
#define isxdigit(c)	((__ismask(c)&(_D|_X)) != 0)
#define tolower(c) __tolower(c)
#define _tolower(c) ((c) | 0x20)

/* lib/kstrtox.h */
#define KSTRTOX_OVERFLOW	(1U << 31)

/* include/linux/slab.h, string.h, err.h: malloc and friends */
#define GFP_KERNEL 0
#define kmalloc(n, gfp) malloc(n)
#define kfree(p) free(p)
#define kstrdup(s, gfp) strdup(s)
#define kstrndup(s, n, gfp) strndup(s, n)
static inline char *kmemdup_nul(const char *s, size_t len, int gfp)
{
	char *p = malloc(len + 1);

	(void)gfp;
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}
/* lib/string.c's strscpy() without its word-at-a-time reads. */
static inline long strscpy(char *dest, const char *src, size_t count)
{
	size_t len = strnlen(src, count);

	if (len == count) {
		memcpy(dest, src, count - 1);
		dest[count - 1] = '\0';
		return -E2BIG;
	}
	memcpy(dest, src, len + 1);
	return len;
}
#define strstrip strim
char *strim(char *s);
static inline void *ERR_PTR(long error)
{
	return (void *)error;
}
static inline long PTR_ERR(const void *ptr)
{
	return (long)ptr;
}
#define IS_ERR(p) ((unsigned long)(void *)(p) >= (unsigned long)-4095)

/* include/linux/parser.h, lib/parser.c */
#define MAX_OPT_ARGS 3
#define NUMBER_BUF_LEN 24
typedef struct {
	char *from;
	char *to;
} substring_t;
struct match_token {
	int token;
	const char *pattern;
};
typedef struct match_token match_table_t[];

/* include/linux/inet.h: the kernel's, glibc's INET6_ADDRSTRLEN is 46 */
#undef INET_ADDRSTRLEN
#undef INET6_ADDRSTRLEN
#define INET_ADDRSTRLEN		(16)
#define INET6_ADDRSTRLEN	(48)

/* include/net/ipv6.h, net/core/utils.c: constants */
#define IPV6_ADDR_ANY		0x0000U
#define IPV6_ADDR_UNICAST	0x0001U
#define IPV6_ADDR_MULTICAST	0x0002U
#define IPV6_ADDR_LOOPBACK	0x0010U
#define IPV6_ADDR_LINKLOCAL	0x0020U
#define IPV6_ADDR_SITELOCAL	0x0040U
#define IPV6_ADDR_COMPATv4	0x0080U
#define IPV6_ADDR_MAPPED	0x1000U
#define IPV6_ADDR_SCOPE_NODELOCAL	0x01
#define IPV6_ADDR_SCOPE_LINKLOCAL	0x02
#define IPV6_ADDR_SCOPE_SITELOCAL	0x05
#define IPV6_ADDR_SCOPE_GLOBAL		0x0e
#define IPV6_ADDR_SCOPE_TYPE(scope)	((scope) << 16)
#define IPV6_ADDR_MC_SCOPE(a)	((a)->s6_addr[1] & 0x0f)
#define IN6PTON_XDIGIT		0x00010000
#define IN6PTON_DIGIT		0x00020000
#define IN6PTON_COLON_MASK	0x00700000
#define IN6PTON_COLON_1		0x00100000
#define IN6PTON_COLON_2		0x00200000
#define IN6PTON_COLON_1_2	0x00400000
#define IN6PTON_DOT		0x00800000
#define IN6PTON_DELIM		0x10000000
#define IN6PTON_NULL		0x20000000
#define IN6PTON_UNKNOWN		0x40000000

/* The network stack: one interface, "eth0", index 7 (the Rust targets' ifindex()). */
struct net {
	int unused;
};
extern struct net init_net;
struct net_device {
	int ifindex;
};
struct net_device *dev_get_by_name(struct net *net, const char *name);
#define dev_put(dev) do { } while (0)

/* include/rdma/ib.h, rdma_cm.h: AF_IB and its socket address */
#ifndef AF_IB
#define AF_IB 27
#endif
#define RDMA_IB_IP_PS_IB 0x00000000013F0000ULL
struct ib_addr {
	u8 sib_raw[16];
};
struct sockaddr_ib {
	unsigned short sib_family;
	__be16 sib_pkey;
	__be32 sib_flowinfo;
	struct ib_addr sib_addr;
	__be64 sib_sid;
	__be64 sib_sid_mask;
	u64 sib_scope_id;
};

/* drivers/infiniband/ulp/rtrs: rtrs.h, rtrs-clt.h, rtrs-log.h, rtrs-pri.h */
struct rtrs_addr {
	struct sockaddr_storage *src;
	struct sockaddr_storage *dst;
};
struct attribute {
	const char *name;
};
struct device_attribute {
	struct attribute attr;
};
struct device {
	int unused;
};
struct rtrs_clt_sess {
	struct device dev;
	int mp_policy;
	int max_reconnect_attempts;
};
#define rtrs_err(obj, ...) do { (void)(obj); } while (0)
void rtrs_clt_set_max_reconnect_attempts(struct rtrs_clt_sess *clt, int value);
#define MP_POLICY_RR 0
#define MP_POLICY_MIN_INFLIGHT 1
#define MP_POLICY_MIN_LATENCY 2
#define MIN_MAX_RECONN_ATT -1
#define MAX_MAX_RECONN_ATT 9999
#ifndef NAME_MAX
#define NAME_MAX 255
#endif
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* drivers/block/rnbd: rnbd-proto.h, rnbd-clt.h, rnbd-clt-sysfs.c, rnbd-srv*.{c,h} */
enum rnbd_access_mode {
	RNBD_ACCESS_RO,
	RNBD_ACCESS_RW,
	RNBD_ACCESS_MIGRATION,
};
enum {
	RNBD_OPT_ERR		= 0,
	RNBD_OPT_DEST_PORT	= 1 << 0,
	RNBD_OPT_PATH		= 1 << 1,
	RNBD_OPT_DEV_PATH	= 1 << 2,
	RNBD_OPT_ACCESS_MODE	= 1 << 3,
	RNBD_OPT_SESSNAME	= 1 << 6,
	RNBD_OPT_NR_POLL_QUEUES	= 1 << 7,
};
struct rnbd_map_options {
	char *sessname;
	struct rtrs_addr *paths;
	size_t *path_cnt;
	char *pathname;
	u16 *dest_port;
	enum rnbd_access_mode *access_mode;
	u32 *nr_poll_queues;
};
extern unsigned int nr_cpu_ids;
struct kernel_param;
struct rnbd_srv_session {
	const char *sessname;
};
#define DEFAULT_DEV_SEARCH_PATH "/"
extern char dev_search_path[PATH_MAX];

#endif
