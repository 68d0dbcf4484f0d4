// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The oracle's entry points, called by fuzz/src/lib.rs (mod oracle):
 * hand-written callers of the kernel definitions that fuzz/build.rs
 * extracted into OUT_DIR/kernel.c (which #includes this file at its end),
 * and the state those definitions expect (init_net, nr_cpu_ids,
 * dev_search_path). kstrtouint(), kstrtoint() and kstrtoull() are called
 * directly.
 */

struct net init_net;
unsigned int nr_cpu_ids;
char dev_search_path[PATH_MAX] = DEFAULT_DEV_SEARCH_PATH;

struct net_device *dev_get_by_name(struct net *net, const char *name)
{
	static struct net_device eth0 = { .ifindex = 7 };

	(void)net;
	return strcmp(name, "eth0") == 0 ? &eth0 : NULL;
}

void rtrs_clt_set_max_reconnect_attempts(struct rtrs_clt_sess *clt, int value)
{
	clt->max_reconnect_attempts = value;
}

/* What the targets compare of a struct sockaddr_storage (all host order). */
struct oracle_addr {
	int family; /* 2 AF_INET, 10 AF_INET6, 27 AF_IB */
	u16 port; /* for AF_IB the low 16 bits of the service ID */
	u32 scope_id;
	u64 sid;
	u8 addr[16]; /* IPv4: the first 4 bytes */
};

static void oracle_addr_of(const struct sockaddr_storage *ss, struct oracle_addr *o)
{
	const struct sockaddr_in *in4 = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;
	const struct sockaddr_ib *ib = (const struct sockaddr_ib *)ss;

	memset(o, 0, sizeof(*o));
	o->family = ss->ss_family;
	switch (ss->ss_family) {
	case AF_INET:
		o->port = ntohs(in4->sin_port);
		memcpy(o->addr, &in4->sin_addr, 4);
		break;
	case AF_INET6:
		o->port = ntohs(in6->sin6_port);
		o->scope_id = in6->sin6_scope_id;
		memcpy(o->addr, &in6->sin6_addr, 16);
		break;
	case AF_IB:
		o->sid = be64toh(ib->sib_sid);
		o->port = (u16)o->sid;
		memcpy(o->addr, ib->sib_addr.sib_raw, 16);
		break;
	}
}

/* rtrs_str_to_sockaddr() on a fresh (zeroed) address. */
int oracle_str_to_sockaddr(const char *addr, size_t len,
			   u16 port, struct oracle_addr *dst)
{
	struct sockaddr_storage ss;
	int ret;

	memset(&ss, 0, sizeof(ss));
	ret = rtrs_str_to_sockaddr(addr, len, port, &ss);
	oracle_addr_of(&ss, dst);
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
	struct sockaddr_storage addrs[6][2];
	struct rtrs_addr paths[6];
	size_t path_cnt;
	int ret;

	memset(m, 0, sizeof(*m));
	memset(addrs, 0, sizeof(addrs));
	nr_cpu_ids = cpus;
	opt.sessname = m->sessname;
	opt.paths = paths;
	opt.path_cnt = &path_cnt;
	opt.pathname = m->pathname;
	opt.dest_port = &port_nr;
	opt.access_mode = &access_mode;
	opt.nr_poll_queues = &nr_poll_queues;
	for (path_cnt = 0; path_cnt < ARRAY_SIZE(paths); path_cnt++) {
		paths[path_cnt].src = &addrs[path_cnt][0];
		paths[path_cnt].dst = &addrs[path_cnt][1];
	}

	ret = rnbd_clt_parse_map_options(buf, ARRAY_SIZE(paths), &opt);
	m->dest_port = port_nr;
	m->access_mode = access_mode;
	m->nr_poll_queues = nr_poll_queues;
	m->path_cnt = path_cnt;
	for (path_cnt = 0; path_cnt < m->path_cnt; path_cnt++) {
		m->paths[path_cnt].has_src = paths[path_cnt].src != NULL;
		oracle_addr_of(&addrs[path_cnt][0], &m->paths[path_cnt].src);
		oracle_addr_of(&addrs[path_cnt][1], &m->paths[path_cnt].dst);
	}
	return ret;
}

/*
 * Loads the module with dev_search_path=@param (a fresh parameter buffer),
 * then opens @dev_name for session @sessname as process_msg_open() does up
 * to the full path (its two checks on the name, restated here: the
 * function itself needs the whole server): 0 and the path in @out
 * (PATH_MAX bytes), or -errno. *@set_rc is dev_search_path_set()'s result
 * (on failure the default "/" stays).
 */
int oracle_full_path(const char *param, const char *sessname,
		     const char *dev_name, char *out, int *set_rc)
{
	struct rnbd_srv_session sess = { .sessname = sessname };
	char *full_path;

	memset(dev_search_path, 0, sizeof(dev_search_path));
	strcpy(dev_search_path, DEFAULT_DEV_SEARCH_PATH);
	*set_rc = dev_search_path_set(param, NULL);

	if ((strlen(dev_search_path) + strlen(dev_name)) >= PATH_MAX)
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

/* mpath_policy_store(): 0 and the new policy in *@policy, or -errno. */
int oracle_mpath_policy_store(const char *buf, int *policy)
{
	struct rtrs_clt_sess clt = { .mp_policy = -1 };
	struct device_attribute attr = { .attr.name = "mpath_policy" };
	ssize_t ret;

	ret = mpath_policy_store(&clt.dev, &attr, buf, strlen(buf));
	if (ret < 0)
		return ret;
	*policy = clt.mp_policy;
	return 0;
}

/* max_reconnect_attempts_store(): 0 and the value in *@out, or -errno. */
int oracle_max_reconnect_attempts_store(const char *buf, int *out)
{
	struct rtrs_clt_sess clt = { .max_reconnect_attempts = -2 };
	struct device_attribute attr = { .attr.name = "max_reconnect_attempts" };
	ssize_t ret;

	ret = max_reconnect_attempts_store(&clt.dev, &attr, buf, strlen(buf));
	if (ret < 0)
		return ret;
	*out = clt.max_reconnect_attempts;
	return 0;
}
