// SPDX-License-Identifier: GPL-2.0
/*
 * The C functions of Linux 6.12 that the Rust address and number parsers
 * re-implement, copied from the kernel sources to serve as the fuzz
 * targets' oracle (fuzz/build.rs compiles this file; the differential
 * targets compare the Rust results with these):
 *
 *   lib/hexdump.c             hex_to_bin()
 *   lib/kstrtox.c             _parse_integer_fixup_radix(), _parse_integer_limit(),
 *                             _kstrtoull(), kstrtoull(), kstrtoll(), kstrtouint(),
 *                             kstrtoint()
 *   net/core/utils.c          xdigit2bin(), in4_pton(), in6_pton(), inet4_pton(),
 *                             inet6_pton(), inet_pton_with_scope()
 *   net/ipv6/addrconf_core.c  ipv6_addr_scope2type(), __ipv6_addr_type()
 *   drivers/infiniband/ulp/rtrs/rtrs.c
 *                             rtrs_str_gid_to_sockaddr(), rtrs_str_to_sockaddr()
 *
 * The function bodies are the kernel's, their logic unchanged; the kernel
 * types, macros and the few calls into the rest of the kernel
 * (dev_get_by_name, kstrndup, kmalloc, div_u64, pr_err) are replaced by
 * shims, the socket addresses by struct oracle_addr (so __ipv6_addr_type()
 * reads big-endian words instead of comparing with htonl(), and
 * rtrs_str_gid_to_sockaddr() fills only what the targets compare), and the
 * strnstr() over the whole dev_search_path buffer by strstr() on a buffer
 * that is NUL past the string. Build with -fwrapv, as the kernel does with
 * -fno-strict-overflow.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;

#define noinline
#define unlikely(x) (x)
#define KSTRTOX_OVERFLOW (1U << 31)
#define _tolower(c) ((c) | 0x20)
#define isxdigit(c) ((('0' <= (c)) && ((c) <= '9')) || (('a' <= _tolower((unsigned char)(c))) && (_tolower((unsigned char)(c)) <= 'f')))
#define INET_ADDRSTRLEN 16
#define INET6_ADDRSTRLEN 48
#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define RDMA_IB_IP_PS_IB 0x00000000013F0000ULL

static u64 div_u64(u64 dividend, u32 divisor)
{
	return dividend / divisor;
}

/* The one interface the oracle knows, as the Rust targets' ifindex(). */
static int dev_get_by_name_ifindex(const char *name)
{
	return strcmp(name, "eth0") == 0 ? 7 : 0;
}

/* What the parsers produce instead of a struct sockaddr_storage. */
struct oracle_addr {
	int family; /* 2 AF_INET, 10 AF_INET6, 27 AF_IB */
	u16 port;
	u32 scope_id;
	u64 sid;
	u8 addr[16]; /* IPv4: the first 4 bytes */
};

/* lib/hexdump.c */
int hex_to_bin(unsigned char ch)
{
	unsigned char cu = ch & 0xdf;
	return -1 +
		((ch - '0' +  1) & (unsigned)((ch - '9' - 1) & ('0' - 1 - ch)) >> 8) +
		((cu - 'A' + 11) & (unsigned)((cu - 'F' - 1) & ('A' - 1 - cu)) >> 8);
}

/* lib/kstrtox.c */
noinline
const char *_parse_integer_fixup_radix(const char *s, unsigned int *base)
{
	if (*base == 0) {
		if (s[0] == '0') {
			if (_tolower(s[1]) == 'x' && isxdigit(s[2]))
				*base = 16;
			else
				*base = 8;
		} else
			*base = 10;
	}
	if (*base == 16 && s[0] == '0' && _tolower(s[1]) == 'x')
		s += 2;
	return s;
}

noinline
unsigned int _parse_integer_limit(const char *s, unsigned int base, unsigned long long *p,
				  size_t max_chars)
{
	unsigned long long res;
	unsigned int rv;

	res = 0;
	rv = 0;
	while (max_chars--) {
		unsigned int c = *s;
		unsigned int lc = _tolower(c);
		unsigned int val;

		if ('0' <= c && c <= '9')
			val = c - '0';
		else if ('a' <= lc && lc <= 'f')
			val = lc - 'a' + 10;
		else
			break;

		if (val >= base)
			break;
		/*
		 * Check for overflow only if we are within range of
		 * it in the max base we support (16)
		 */
		if (unlikely(res & (~0ull << 60))) {
			if (res > div_u64(ULLONG_MAX - val, base))
				rv |= KSTRTOX_OVERFLOW;
		}
		res = res * base + val;
		rv++;
		s++;
	}
	*p = res;
	return rv;
}

noinline
unsigned int _parse_integer(const char *s, unsigned int base, unsigned long long *p)
{
	return _parse_integer_limit(s, base, p, INT_MAX);
}

static int _kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
	unsigned long long _res;
	unsigned int rv;

	s = _parse_integer_fixup_radix(s, &base);
	rv = _parse_integer(s, base, &_res);
	if (rv & KSTRTOX_OVERFLOW)
		return -ERANGE;
	if (rv == 0)
		return -EINVAL;
	s += rv;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = _res;
	return 0;
}

noinline
int kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
	if (s[0] == '+')
		s++;
	return _kstrtoull(s, base, res);
}

noinline
int kstrtoll(const char *s, unsigned int base, long long *res)
{
	unsigned long long tmp;
	int rv;

	if (s[0] == '-') {
		rv = _kstrtoull(s + 1, base, &tmp);
		if (rv < 0)
			return rv;
		if ((long long)-tmp > 0)
			return -ERANGE;
		*res = -tmp;
	} else {
		rv = kstrtoull(s, base, &tmp);
		if (rv < 0)
			return rv;
		if ((long long)tmp < 0)
			return -ERANGE;
		*res = tmp;
	}
	return 0;
}

noinline
int kstrtouint(const char *s, unsigned int base, unsigned int *res)
{
	unsigned long long tmp;
	int rv;

	rv = kstrtoull(s, base, &tmp);
	if (rv < 0)
		return rv;
	if (tmp != (unsigned int)tmp)
		return -ERANGE;
	*res = tmp;
	return 0;
}

noinline
int kstrtoint(const char *s, unsigned int base, int *res)
{
	long long tmp;
	int rv;

	rv = kstrtoll(s, base, &tmp);
	if (rv < 0)
		return rv;
	if (tmp != (int)tmp)
		return -ERANGE;
	*res = tmp;
	return 0;
}

/* net/core/utils.c */
#define IN6PTON_XDIGIT		0x00010000
#define IN6PTON_DIGIT		0x00020000
#define IN6PTON_COLON_MASK	0x00700000
#define IN6PTON_COLON_1		0x00100000	/* single : requested */
#define IN6PTON_COLON_2		0x00200000	/* second : requested */
#define IN6PTON_COLON_1_2	0x00400000	/* :: requested */
#define IN6PTON_DOT		0x00800000	/* . */
#define IN6PTON_DELIM		0x10000000
#define IN6PTON_NULL		0x20000000	/* first/tail */
#define IN6PTON_UNKNOWN		0x40000000

static inline int xdigit2bin(char c, int delim)
{
	int val;

	if (c == delim || c == '\0')
		return IN6PTON_DELIM;
	if (c == ':')
		return IN6PTON_COLON_MASK;
	if (c == '.')
		return IN6PTON_DOT;

	val = hex_to_bin(c);
	if (val >= 0)
		return val | IN6PTON_XDIGIT | (val < 10 ? IN6PTON_DIGIT : 0);

	if (delim == -1)
		return IN6PTON_DELIM;
	return IN6PTON_UNKNOWN;
}

int in4_pton(const char *src, int srclen,
	     u8 *dst,
	     int delim, const char **end)
{
	const char *s;
	u8 *d;
	u8 dbuf[4];
	int ret = 0;
	int i;
	int w = 0;

	if (srclen < 0)
		srclen = strlen(src);
	s = src;
	d = dbuf;
	i = 0;
	while (1) {
		int c;
		c = xdigit2bin(srclen > 0 ? *s : '\0', delim);
		if (!(c & (IN6PTON_DIGIT | IN6PTON_DOT | IN6PTON_DELIM | IN6PTON_COLON_MASK))) {
			goto out;
		}
		if (c & (IN6PTON_DOT | IN6PTON_DELIM | IN6PTON_COLON_MASK)) {
			if (w == 0)
				goto out;
			*d++ = w & 0xff;
			w = 0;
			i++;
			if (c & (IN6PTON_DELIM | IN6PTON_COLON_MASK)) {
				if (i != 4)
					goto out;
				break;
			}
			goto cont;
		}
		w = (w * 10) + c;
		if ((w & 0xffff) > 255) {
			goto out;
		}
cont:
		if (i >= 4)
			goto out;
		s++;
		srclen--;
	}
	ret = 1;
	memcpy(dst, dbuf, sizeof(dbuf));
out:
	if (end)
		*end = s;
	return ret;
}

int in6_pton(const char *src, int srclen,
	     u8 *dst,
	     int delim, const char **end)
{
	const char *s, *tok = NULL;
	u8 *d, *dc = NULL;
	u8 dbuf[16];
	int ret = 0;
	int i;
	int state = IN6PTON_COLON_1_2 | IN6PTON_XDIGIT | IN6PTON_NULL;
	int w = 0;

	memset(dbuf, 0, sizeof(dbuf));

	s = src;
	d = dbuf;
	if (srclen < 0)
		srclen = strlen(src);

	while (1) {
		int c;

		c = xdigit2bin(srclen > 0 ? *s : '\0', delim);
		if (!(c & state))
			goto out;
		if (c & (IN6PTON_DELIM | IN6PTON_COLON_MASK)) {
			/* process one 16-bit word */
			if (!(state & IN6PTON_NULL)) {
				*d++ = (w >> 8) & 0xff;
				*d++ = w & 0xff;
			}
			w = 0;
			if (c & IN6PTON_DELIM) {
				/* We've processed last word */
				break;
			}
			/*
			 * COLON_1 => XDIGIT
			 * COLON_2 => XDIGIT|DELIM
			 * COLON_1_2 => COLON_2
			 */
			switch (state & IN6PTON_COLON_MASK) {
			case IN6PTON_COLON_2:
				dc = d;
				state = IN6PTON_XDIGIT | IN6PTON_DELIM;
				if (dc - dbuf >= sizeof(dbuf))
					state |= IN6PTON_NULL;
				break;
			case IN6PTON_COLON_1|IN6PTON_COLON_1_2:
				state = IN6PTON_XDIGIT | IN6PTON_COLON_2;
				break;
			case IN6PTON_COLON_1:
				state = IN6PTON_XDIGIT;
				break;
			case IN6PTON_COLON_1_2:
				state = IN6PTON_COLON_2;
				break;
			default:
				state = 0;
			}
			tok = s + 1;
			goto cont;
		}

		if (c & IN6PTON_DOT) {
			ret = in4_pton(tok ? tok : s, srclen + (int)(s - tok), d, delim, &s);
			if (ret > 0) {
				d += 4;
				break;
			}
			goto out;
		}

		w = (w << 4) | (0xff & c);
		state = IN6PTON_COLON_1 | IN6PTON_DELIM;
		if (!(w & 0xf000)) {
			state |= IN6PTON_XDIGIT;
		}
		if (!dc && d + 2 < dbuf + sizeof(dbuf)) {
			state |= IN6PTON_COLON_1_2;
			state &= ~IN6PTON_DELIM;
		}
		if (d + 2 >= dbuf + sizeof(dbuf)) {
			state &= ~(IN6PTON_COLON_1|IN6PTON_COLON_1_2);
		}
cont:
		if ((dc && d + 4 < dbuf + sizeof(dbuf)) ||
		    d + 4 == dbuf + sizeof(dbuf)) {
			state |= IN6PTON_DOT;
		}
		if (d >= dbuf + sizeof(dbuf)) {
			state &= ~(IN6PTON_XDIGIT|IN6PTON_COLON_MASK);
		}
		s++;
		srclen--;
	}

	i = 15; d--;

	if (dc) {
		while (d >= dc)
			dst[i--] = *d--;
		while (i >= dc - dbuf)
			dst[i--] = 0;
		while (i >= 0)
			dst[i--] = *d--;
	} else
		memcpy(dst, dbuf, sizeof(dbuf));

	ret = 1;
out:
	if (end)
		*end = s;
	return ret;
}

/* net/ipv6/addrconf_core.c and include/net/ipv6.h, on a byte array. */
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
#define IPV6_ADDR_MC_SCOPE(a)	((a)[1] & 0x0f)

static u32 be32_at(const u8 *a, int i)
{
	return ((u32)a[4 * i] << 24) | ((u32)a[4 * i + 1] << 16) |
	       ((u32)a[4 * i + 2] << 8) | a[4 * i + 3];
}

static inline unsigned int ipv6_addr_scope2type(unsigned int scope)
{
	switch (scope) {
	case IPV6_ADDR_SCOPE_NODELOCAL:
		return (IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_NODELOCAL) |
			IPV6_ADDR_LOOPBACK);
	case IPV6_ADDR_SCOPE_LINKLOCAL:
		return (IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_LINKLOCAL) |
			IPV6_ADDR_LINKLOCAL);
	case IPV6_ADDR_SCOPE_SITELOCAL:
		return (IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_SITELOCAL) |
			IPV6_ADDR_SITELOCAL);
	}
	return IPV6_ADDR_SCOPE_TYPE(scope);
}

/* The kernel's, with st and s6_addr32[] in host order (htonl dropped). */
static int __ipv6_addr_type(const u8 *addr)
{
	u32 st;

	st = be32_at(addr, 0);

	if ((st & 0xE0000000) != 0x00000000 &&
	    (st & 0xE0000000) != 0xE0000000)
		return (IPV6_ADDR_UNICAST |
			IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_GLOBAL));

	if ((st & 0xFF000000) == 0xFF000000) {
		return (IPV6_ADDR_MULTICAST |
			ipv6_addr_scope2type(IPV6_ADDR_MC_SCOPE(addr)));
	}

	if ((st & 0xFFC00000) == 0xFE800000)
		return (IPV6_ADDR_LINKLOCAL | IPV6_ADDR_UNICAST |
			IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_LINKLOCAL));
	if ((st & 0xFFC00000) == 0xFEC00000)
		return (IPV6_ADDR_SITELOCAL | IPV6_ADDR_UNICAST |
			IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_SITELOCAL));
	if ((st & 0xFE000000) == 0xFC000000)
		return (IPV6_ADDR_UNICAST |
			IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_GLOBAL));

	if ((be32_at(addr, 0) | be32_at(addr, 1)) == 0) {
		if (be32_at(addr, 2) == 0) {
			if (be32_at(addr, 3) == 0)
				return IPV6_ADDR_ANY;

			if (be32_at(addr, 3) == 0x00000001)
				return (IPV6_ADDR_LOOPBACK | IPV6_ADDR_UNICAST |
					IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_LINKLOCAL));

			return (IPV6_ADDR_COMPATv4 | IPV6_ADDR_UNICAST |
				IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_GLOBAL));
		}

		if (be32_at(addr, 2) == 0x0000ffff)
			return (IPV6_ADDR_MAPPED |
				IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_GLOBAL));
	}

	return (IPV6_ADDR_UNICAST |
		IPV6_ADDR_SCOPE_TYPE(IPV6_ADDR_SCOPE_GLOBAL));
}

static inline int ipv6_addr_type(const u8 *addr)
{
	return __ipv6_addr_type(addr) & 0xffff;
}

/* net/core/utils.c, on struct oracle_addr */
static int inet4_pton(const char *src, u16 port_num,
		struct oracle_addr *addr)
{
	size_t srclen = strlen(src);

	if (srclen > INET_ADDRSTRLEN)
		return -EINVAL;

	if (in4_pton(src, srclen, addr->addr,
		     '\n', NULL) == 0)
		return -EINVAL;

	addr->family = 2;
	addr->port = port_num;

	return 0;
}

static int inet6_pton(void *net, const char *src, u16 port_num,
		struct oracle_addr *addr)
{
	const char *scope_delim;
	size_t srclen = strlen(src);

	(void)net;
	if (srclen > INET6_ADDRSTRLEN)
		return -EINVAL;

	if (in6_pton(src, srclen, addr->addr,
		     '%', &scope_delim) == 0)
		return -EINVAL;

	if (ipv6_addr_type(addr->addr) & IPV6_ADDR_LINKLOCAL &&
	    src + srclen != scope_delim && *scope_delim == '%') {
		int ifindex;
		char scope_id[16];
		size_t scope_len = min_t(size_t, sizeof(scope_id) - 1,
					 src + srclen - scope_delim - 1);

		memcpy(scope_id, scope_delim + 1, scope_len);
		scope_id[scope_len] = '\0';

		ifindex = dev_get_by_name_ifindex(scope_id);
		if (ifindex) {
			addr->scope_id = ifindex;
		} else if (kstrtouint(scope_id, 0, &addr->scope_id)) {
			return -EINVAL;
		}
	}

	addr->family = 10;
	addr->port = port_num;

	return 0;
}

int kstrtou16(const char *s, unsigned int base, u16 *res)
{
	unsigned long long tmp;
	int rv;

	rv = kstrtoull(s, base, &tmp);
	if (rv < 0)
		return rv;
	if (tmp != (u16)tmp)
		return -ERANGE;
	*res = tmp;
	return 0;
}

static int inet_pton_with_scope(void *net, int af,
		const char *src, const char *port, struct oracle_addr *addr)
{
	u16 port_num;
	int ret = -EINVAL;

	(void)af; /* AF_UNSPEC */
	if (port) {
		if (kstrtou16(port, 0, &port_num))
			return -EINVAL;
	} else {
		port_num = 0;
	}

	ret = inet4_pton(src, port_num, addr);
	if (ret)
		ret = inet6_pton(net, src, port_num, addr);

	return ret;
}

/* drivers/infiniband/ulp/rtrs/rtrs.c */
static int rtrs_str_gid_to_sockaddr(const char *addr, size_t len,
				     short port, struct oracle_addr *dst)
{
	int ret;

	ret = in6_pton(addr, len, dst->addr, '\0', NULL);
	if (ret == 0)
		return -EINVAL;

	dst->family = 27;
	dst->port = port;
	dst->sid = RDMA_IB_IP_PS_IB | port;

	return 0;
}

/* The C-string argument of the oracle: @addr is NUL-terminated, @len its strlen. */
int oracle_str_to_sockaddr(const char *addr, size_t len,
			   u16 port, struct oracle_addr *dst)
{
	memset(dst, 0, sizeof(*dst));
	if (strncmp(addr, "gid:", 4) == 0) {
		return rtrs_str_gid_to_sockaddr(addr + 4, len - 4, port, dst);
	} else if (strncmp(addr, "ip:", 3) == 0) {
		char port_str[8];
		char *cpy;
		int err;

		snprintf(port_str, sizeof(port_str), "%u", port);
		cpy = strndup(addr + 3, len - 3);
		err = cpy ? inet_pton_with_scope(NULL, 0,
						 cpy, port_str, dst) : -ENOMEM;
		free(cpy);

		return err;
	}
	return -EPROTONOSUPPORT;
}

/*
 * The RNBD client's map_device parser (drivers/block/rnbd/rnbd-clt-sysfs.c)
 * and what it calls: match_token() and match_int() of lib/parser.c,
 * simple_strtol() of lib/vsprintf.c, strim()/strsep() of lib/string*.c,
 * rtrs_addr_to_sockaddr() of rtrs.c.
 */
#define NAME_MAX 255
#define MAX_OPT_ARGS 3
#define NUMBER_BUF_LEN 24
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define pr_err(...) do { } while (0)
#define GFP_KERNEL 0

/* lib/ctype.c: _S is \t..\r, space and 0xa0. */
static int isspace(char c)
{
	unsigned char u = c;

	return (u >= 9 && u <= 13) || u == 32 || u == 160;
}

static int isdigit(char c)
{
	return c >= '0' && c <= '9';
}

static char *kstrdup(const char *s, int gfp)
{
	(void)gfp;
	return strdup(s);
}

static void kfree(void *p)
{
	free(p);
}

static char *kmemdup_nul(const char *s, size_t len, int gfp)
{
	char *p = malloc(len + 1);

	(void)gfp;
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

static long strscpy(char *dest, const char *src, size_t count)
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

/* lib/vsprintf.c */
static unsigned long long simple_strntoull(const char *startp, char **endp, unsigned int base, size_t max_chars)
{
	const char *cp;
	unsigned long long result = 0ULL;
	size_t prefix_chars;
	unsigned int rv;

	cp = _parse_integer_fixup_radix(startp, &base);
	prefix_chars = cp - startp;
	if (prefix_chars < max_chars) {
		rv = _parse_integer_limit(cp, base, &result, max_chars - prefix_chars);
		/* FIXME */
		cp += (rv & ~KSTRTOX_OVERFLOW);
	} else {
		/* Field too short for prefix + digit, skip over without converting */
		cp = startp + max_chars;
	}

	if (endp)
		*endp = (char *)cp;

	return result;
}

unsigned long long simple_strtoull(const char *cp, char **endp, unsigned int base)
{
	return simple_strntoull(cp, endp, base, INT_MAX);
}

unsigned long simple_strtoul(const char *cp, char **endp, unsigned int base)
{
	return simple_strtoull(cp, endp, base);
}

long simple_strtol(const char *cp, char **endp, unsigned int base)
{
	if (*cp == '-')
		return -simple_strtoul(cp + 1, endp, base);

	return simple_strtoul(cp, endp, base);
}

/* lib/string_helpers.c, lib/string.c */
char *skip_spaces(const char *str)
{
	while (isspace(*str))
		++str;
	return (char *)str;
}

char *strim(char *s)
{
	size_t size;
	char *end;

	size = strlen(s);
	if (!size)
		return s;

	end = s + size - 1;
	while (end >= s && isspace(*end))
		end--;
	*(end + 1) = '\0';

	return skip_spaces(s);
}
#define strstrip strim

/* lib/parser.c */
typedef struct {
	char *from;
	char *to;
} substring_t;

struct match_token {
	int token;
	const char *pattern;
};
typedef struct match_token match_table_t[];

static int match_one(char *s, const char *p, substring_t args[])
{
	char *meta;
	int argc = 0;

	if (!p)
		return 1;

	while(1) {
		int len = -1;
		meta = strchr(p, '%');
		if (!meta)
			return strcmp(p, s) == 0;

		if (strncmp(p, s, meta-p))
			return 0;

		s += meta - p;
		p = meta + 1;

		if (isdigit(*p))
			len = simple_strtoul(p, (char **) &p, 10);
		else if (*p == '%') {
			if (*s++ != '%')
				return 0;
			p++;
			continue;
		}

		if (argc >= MAX_OPT_ARGS)
			return 0;

		args[argc].from = s;
		switch (*p++) {
		case 's': {
			size_t str_len = strlen(s);

			if (str_len == 0)
				return 0;
			if (len == -1 || len > str_len)
				len = str_len;
			args[argc].to = s + len;
			break;
		}
		case 'd':
			simple_strtol(s, &args[argc].to, 0);
			goto num;
		case 'u':
			simple_strtoul(s, &args[argc].to, 0);
			goto num;
		case 'o':
			simple_strtoul(s, &args[argc].to, 8);
			goto num;
		case 'x':
			simple_strtoul(s, &args[argc].to, 16);
		num:
			if (args[argc].to == args[argc].from)
				return 0;
			break;
		default:
			return 0;
		}
		s = args[argc].to;
		argc++;
	}
}

int match_token(char *s, const match_table_t table, substring_t args[])
{
	const struct match_token *p;

	for (p = table; !match_one(s, p->pattern, args) ; p++)
		;

	return p->token;
}

size_t match_strlcpy(char *dest, const substring_t *src, size_t size)
{
	size_t ret = src->to - src->from;

	if (size) {
		size_t len = ret >= size ? size - 1 : ret;
		memcpy(dest, src->from, len);
		dest[len] = '\0';
	}
	return ret;
}

static int match_number(substring_t *s, int *result, int base)
{
	char *endp;
	char buf[NUMBER_BUF_LEN];
	int ret;
	long val;

	if (match_strlcpy(buf, s, NUMBER_BUF_LEN) >= NUMBER_BUF_LEN)
		return -ERANGE;
	ret = 0;
	val = simple_strtol(buf, &endp, base);
	if (endp == buf)
		ret = -EINVAL;
	else if (val < (long)INT_MIN || val > (long)INT_MAX)
		ret = -ERANGE;
	else
		*result = (int) val;
	return ret;
}

int match_int(substring_t *s, int *result)
{
	return match_number(s, result, 0);
}

char *match_strdup(const substring_t *s)
{
	return kmemdup_nul(s->from, s->to - s->from, GFP_KERNEL);
}

/* drivers/infiniband/ulp/rtrs/rtrs.c */
struct rtrs_addr {
	struct oracle_addr *src;
	struct oracle_addr *dst;
};

int rtrs_addr_to_sockaddr(const char *str, size_t len, u16 port,
			  struct rtrs_addr *addr)
{
	const char *d;

	d = strchr(str, ',');
	if (!d)
		d = strchr(str, '@');
	if (d) {
		if (oracle_str_to_sockaddr(str, d - str, 0, addr->src))
			return -EINVAL;
		d += 1;
		len -= d - str;
		str  = d;

	} else {
		addr->src = NULL;
	}
	return oracle_str_to_sockaddr(str, len, port, addr->dst);
}

/* drivers/block/rnbd/rnbd-clt-sysfs.c */
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

static const unsigned int rnbd_opt_mandatory[] = {
	RNBD_OPT_DEV_PATH,
	RNBD_OPT_SESSNAME,
};

static const match_table_t rnbd_opt_tokens = {
	{RNBD_OPT_PATH,			"path=%s"		},
	{RNBD_OPT_DEV_PATH,		"device_path=%s"	},
	{RNBD_OPT_DEST_PORT,		"dest_port=%d"		},
	{RNBD_OPT_ACCESS_MODE,		"access_mode=%s"	},
	{RNBD_OPT_SESSNAME,		"sessname=%s"		},
	{RNBD_OPT_NR_POLL_QUEUES,	"nr_poll_queues=%d"	},
	{RNBD_OPT_ERR,			NULL			},
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

static unsigned int nr_cpu_ids;

static int rnbd_clt_parse_map_options(const char *buf, size_t max_path_cnt,
				       struct rnbd_map_options *opt)
{
	char *options, *sep_opt;
	char *p;
	substring_t args[MAX_OPT_ARGS];
	int opt_mask = 0;
	int token;
	int ret = -EINVAL;
	int nr_poll_queues = 0;
	int dest_port = 0;
	int p_cnt = 0;
	int i;

	options = kstrdup(buf, GFP_KERNEL);
	if (!options)
		return -ENOMEM;

	sep_opt = strstrip(options);
	while ((p = strsep(&sep_opt, " ")) != NULL) {
		if (!*p)
			continue;

		token = match_token(p, rnbd_opt_tokens, args);
		opt_mask |= token;

		switch (token) {
		case RNBD_OPT_SESSNAME:
			p = match_strdup(args);
			if (!p) {
				ret = -ENOMEM;
				goto out;
			}
			if (strlen(p) > NAME_MAX) {
				pr_err("map_device: sessname too long\n");
				ret = -EINVAL;
				kfree(p);
				goto out;
			}
			strscpy(opt->sessname, p, NAME_MAX);
			kfree(p);
			break;

		case RNBD_OPT_PATH:
			if (p_cnt >= max_path_cnt) {
				pr_err("map_device: too many (> %zu) paths provided\n",
				       max_path_cnt);
				ret = -ENOMEM;
				goto out;
			}
			p = match_strdup(args);
			if (!p) {
				ret = -ENOMEM;
				goto out;
			}

			ret = rtrs_addr_to_sockaddr(p, strlen(p),
						    *opt->dest_port,
						    &opt->paths[p_cnt]);
			if (ret) {
				pr_err("Can't parse path %s: %d\n", p, ret);
				kfree(p);
				goto out;
			}

			p_cnt++;

			kfree(p);
			break;

		case RNBD_OPT_DEV_PATH:
			p = match_strdup(args);
			if (!p) {
				ret = -ENOMEM;
				goto out;
			}
			if (strlen(p) > NAME_MAX) {
				pr_err("map_device: Device path too long\n");
				ret = -EINVAL;
				kfree(p);
				goto out;
			}
			strscpy(opt->pathname, p, NAME_MAX);
			kfree(p);
			break;

		case RNBD_OPT_DEST_PORT:
			if (match_int(args, &dest_port) || dest_port < 0 ||
			    dest_port > 65535) {
				pr_err("bad destination port number parameter '%d'\n",
				       dest_port);
				ret = -EINVAL;
				goto out;
			}
			*opt->dest_port = dest_port;
			break;

		case RNBD_OPT_ACCESS_MODE:
			p = match_strdup(args);
			if (!p) {
				ret = -ENOMEM;
				goto out;
			}

			if (!strcmp(p, "ro")) {
				*opt->access_mode = RNBD_ACCESS_RO;
			} else if (!strcmp(p, "rw")) {
				*opt->access_mode = RNBD_ACCESS_RW;
			} else if (!strcmp(p, "migration")) {
				*opt->access_mode = RNBD_ACCESS_MIGRATION;
			} else {
				pr_err("map_device: Invalid access_mode: '%s'\n",
				       p);
				ret = -EINVAL;
				kfree(p);
				goto out;
			}

			kfree(p);
			break;

		case RNBD_OPT_NR_POLL_QUEUES:
			if (match_int(args, &nr_poll_queues) || nr_poll_queues < -1 ||
			    nr_poll_queues > (int)nr_cpu_ids) {
				pr_err("bad nr_poll_queues parameter '%d'\n",
				       nr_poll_queues);
				ret = -EINVAL;
				goto out;
			}
			if (nr_poll_queues == -1)
				nr_poll_queues = nr_cpu_ids;
			*opt->nr_poll_queues = nr_poll_queues;
			break;

		default:
			pr_err("map_device: Unknown parameter or missing value '%s'\n",
			       p);
			ret = -EINVAL;
			goto out;
		}
	}

	for (i = 0; i < ARRAY_SIZE(rnbd_opt_mandatory); i++) {
		if ((opt_mask & rnbd_opt_mandatory[i])) {
			ret = 0;
		} else {
			pr_err("map_device: Parameters missing\n");
			ret = -EINVAL;
			break;
		}
	}

out:
	*opt->path_cnt = p_cnt;
	kfree(options);
	return ret;
}

/* What rnbd_clt_map_device_store() gets out of the parser. */
struct oracle_path {
	int has_src;
	struct oracle_addr src;
	struct oracle_addr dst;
};

struct oracle_map {
	char sessname[NAME_MAX];
	char pathname[NAME_MAX];
	u16 dest_port;
	int access_mode;
	u32 nr_poll_queues;
	size_t path_cnt;
	struct oracle_path paths[6];
};

/* rnbd_clt_map_device_store() up to the parse, with @cpus as nr_cpu_ids. */
int oracle_map_options(const char *buf, unsigned int cpus, struct oracle_map *m)
{
	struct rnbd_map_options opt;
	enum rnbd_access_mode access_mode = RNBD_ACCESS_RW;
	u16 port_nr = 1234; /* RTRS_PORT */
	u32 nr_poll_queues = 0;
	struct rtrs_addr paths[6];
	size_t path_cnt;
	int ret;

	memset(m, 0, sizeof(*m));
	nr_cpu_ids = cpus;
	opt.sessname = m->sessname;
	opt.paths = paths;
	opt.path_cnt = &path_cnt;
	opt.pathname = m->pathname;
	opt.dest_port = &port_nr;
	opt.access_mode = &access_mode;
	opt.nr_poll_queues = &nr_poll_queues;
	for (path_cnt = 0; path_cnt < ARRAY_SIZE(paths); path_cnt++) {
		paths[path_cnt].src = &m->paths[path_cnt].src;
		paths[path_cnt].dst = &m->paths[path_cnt].dst;
	}

	ret = rnbd_clt_parse_map_options(buf, ARRAY_SIZE(paths), &opt);
	m->dest_port = port_nr;
	m->access_mode = access_mode;
	m->nr_poll_queues = nr_poll_queues;
	m->path_cnt = path_cnt;
	for (path_cnt = 0; path_cnt < m->path_cnt; path_cnt++)
		m->paths[path_cnt].has_src = paths[path_cnt].src != NULL;
	return ret;
}

/*
 * The RNBD server's device path (drivers/block/rnbd/rnbd-srv.c): the
 * dev_search_path parameter, the checks of process_msg_open() and
 * rnbd_srv_get_full_path().
 */
#define PATH_MAX 4096
#define DEFAULT_DEV_SEARCH_PATH "/"
#define ERR_PTR(e) ((char *)(long)(e))
#define IS_ERR(p) ((unsigned long)(p) >= (unsigned long)-4095)
#define PTR_ERR(p) ((long)(p))
#define kmalloc(n, gfp) malloc(n)
#define pr_info(...) do { } while (0)

static char dev_search_path[PATH_MAX] = DEFAULT_DEV_SEARCH_PATH;

static int dev_search_path_set(const char *val, const void *kp)
{
	const char *p = strrchr(val, '\n') ? : val + strlen(val);

	(void)kp;
	if (strlen(val) >= sizeof(dev_search_path))
		return -EINVAL;

	snprintf(dev_search_path, sizeof(dev_search_path), "%.*s",
		 (int)(p - val), val);

	pr_info("dev_search_path changed to '%s'\n", dev_search_path);

	return 0;
}

struct rnbd_srv_session {
	const char *sessname;
};

static char *rnbd_srv_get_full_path(struct rnbd_srv_session *srv_sess,
				     const char *dev_name)
{
	char *full_path;
	char *a, *b;
	int len;

	full_path = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!full_path)
		return ERR_PTR(-ENOMEM);

	/*
	 * Replace %SESSNAME% with a real session name in order to
	 * create device namespace.
	 */
	a = strstr(dev_search_path, "%SESSNAME%"); /* strnstr(.., sizeof): the buffer is NUL-padded here */
	if (a) {
		len = a - dev_search_path;

		len = snprintf(full_path, PATH_MAX, "%.*s/%s/%s", len,
			       dev_search_path, srv_sess->sessname, dev_name);
	} else {
		len = snprintf(full_path, PATH_MAX, "%s/%s",
			       dev_search_path, dev_name);
	}
	if (len >= PATH_MAX) {
		pr_err("Too long path: %s, %s, %s\n",
		       dev_search_path, srv_sess->sessname, dev_name);
		kfree(full_path);
		return ERR_PTR(-EINVAL);
	}

	/* eliminitate duplicated slashes */
	a = strchr(full_path, '/');
	b = a;
	while (*b != '\0') {
		if (*b == '/' && *a == '/') {
			b++;
		} else {
			a++;
			*a = *b;
			b++;
		}
	}
	a++;
	*a = '\0';

	return full_path;
}

/*
 * Loads the module with dev_search_path=@param (a fresh parameter buffer),
 * then opens @dev_name for session @sessname as process_msg_open() does up
 * to the full path: 0 and the path in @out (PATH_MAX bytes), or -errno.
 * Returns 1 if setting the parameter failed (the default "/" stays).
 */
int oracle_full_path(const char *param, const char *sessname,
		     const char *dev_name, char *out, int *set_rc)
{
	struct rnbd_srv_session sess = { .sessname = sessname };
	char *full_path;

	memset(dev_search_path, 0, sizeof(dev_search_path));
	strcpy(dev_search_path, DEFAULT_DEV_SEARCH_PATH);
	*set_rc = dev_search_path_set(param, NULL);

	if ((strlen(dev_search_path) + strlen(dev_name))
	    >= PATH_MAX)
		return -EINVAL;
	if (strstr(dev_name, ".."))
		return -EINVAL;
	full_path = rnbd_srv_get_full_path(&sess, dev_name);
	if (IS_ERR(full_path))
		return PTR_ERR(full_path);
	strcpy(out, full_path);
	kfree(full_path);
	return 0;
}

/*
 * The RTRS client's sysfs stores (drivers/infiniband/ulp/rtrs/rtrs-clt-sysfs.c):
 * mpath_policy_store() and max_reconnect_attempts_store(), with strncasecmp()
 * of lib/string.c and the kernel's tolower() (lib/ctype.c: Latin-1 upper
 * case letters too).
 */
#define MP_POLICY_RR 0
#define MP_POLICY_MIN_INFLIGHT 1
#define MP_POLICY_MIN_LATENCY 2
#define MIN_MAX_RECONN_ATT -1
#define MAX_MAX_RECONN_ATT 9999

static int isupper_k(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 192 && c <= 222 && c != 215);
}

static unsigned char tolower_k(unsigned char c)
{
	if (isupper_k(c))
		c -= 'A' - 'a';
	return c;
}

int strncasecmp_k(const char *s1, const char *s2, size_t len)
{
	/* Yes, Virginia, it had better be unsigned */
	unsigned char c1, c2;

	if (!len)
		return 0;

	do {
		c1 = *s1++;
		c2 = *s2++;
		if (!c1 || !c2)
			break;
		if (c1 == c2)
			continue;
		c1 = tolower_k(c1);
		c2 = tolower_k(c2);
		if (c1 != c2)
			break;
	} while (--len);
	return (int)c1 - (int)c2;
}

/* 0 and the new policy in *policy, or -errno. */
int oracle_mpath_policy_store(const char *buf, int *policy)
{
	int value;
	int ret;
	size_t len = 0;

	ret = kstrtoint(buf, 10, &value);
	if (!ret && (value == MP_POLICY_RR ||
		     value == MP_POLICY_MIN_INFLIGHT ||
		     value == MP_POLICY_MIN_LATENCY)) {
		*policy = value;
		return 0;
	}

	/* distinguish "mi" and "min-latency" with length */
	len = strnlen(buf, NAME_MAX);
	if (len && buf[len - 1] == '\n')
		len--;

	if (!strncasecmp_k(buf, "round-robin", 11) ||
	    (len == 2 && !strncasecmp_k(buf, "rr", 2)))
		*policy = MP_POLICY_RR;
	else if (!strncasecmp_k(buf, "min-inflight", 12) ||
		 (len == 2 && !strncasecmp_k(buf, "mi", 2)))
		*policy = MP_POLICY_MIN_INFLIGHT;
	else if (!strncasecmp_k(buf, "min-latency", 11) ||
		 (len == 2 && !strncasecmp_k(buf, "ml", 2)))
		*policy = MP_POLICY_MIN_LATENCY;
	else
		return -EINVAL;

	return 0;
}

/* 0 and the value in *out, or -errno. */
int oracle_max_reconnect_attempts_store(const char *buf, int *out)
{
	int value;
	int ret;

	ret = kstrtoint(buf, 10, &value);
	if (ret)
		return ret;
	if (value > MAX_MAX_RECONN_ATT ||
		     value < MIN_MAX_RECONN_ATT)
		return -EINVAL;
	*out = value;
	return 0;
}
