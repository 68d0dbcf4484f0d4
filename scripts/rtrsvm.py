"""The rtrs-rs test VMs: server and client guests linked by QEMU.

The usual shape is a pair (``Pair``): one server, one client, two links.
``Topology`` makes bigger ones: S servers and C clients, every client linked
to every server by L links. Each link is a pair of virtio NICs joined by a
QEMU ``socket`` netdev on 127.0.0.1 (no slirp, no tap: nothing reaches the
host's network). Link k of the first server and the first client:

    link 0: server 192.0.2.1/24     <-> client 192.0.2.2/24
    link 1: server 198.51.100.1/24  <-> client 198.51.100.2/24

every other link a /30 of 203.0.113.0/24 (``link_addrs``), and each link
also carries 2001:db8:<pair>:<link>::1 and ::2 (/64). A guest's NICs are
numbered by its peers in order (clients for a server, servers for a client),
L each: on a server of three clients, eth2 and eth3 lead to the second.

The first client (``client``) runs the tests: it has a virtio console port
``rtrs.to.<name>`` to every other guest, served there by scripts/guest/agent
on the guest's ``rtrs.peer`` port (lib.sh's on_guest, on_server), and each
guest has ``rtrs.ctl``, the host's channel to it.

A QEMU that listens on a socket accepts a new connection when the old one
ends, so the side that connects can be killed and booted again
(``kill_guest``, ``start_guest``) while the other runs on, as a crashed
machine would be: the first client listens on all of its sockets, a server
listens on the links of the other clients. So any server linked only to the
first client, and any other client, can be restarted. Servers have a disk,
/dev/vda, backed by ``<workdir>/<name>.disk``, which outlives its QEMU: what
it completed before a kill is there after.

The serial console of each guest is appended to ``<workdir>/<name>.console``.
Guests run under TCG: ``-enable-kvm`` hangs these machines' guests.
"""

import base64
import ipaddress
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import time

# The addresses of the first two links between the first server and the
# first client (what lib.sh calls SERVER_IP0, CLIENT_IP0, ...).
LINKS = [("192.0.2.1", "192.0.2.2"), ("198.51.100.1", "198.51.100.2")]
# Links per server-client pair the address plan has room for.
MAX_LINKS = 4
BOOT_TIMEOUT = 180
SERVER_DISK_BYTES = 256 << 20
# The debug profile's kernel (KASAN, lockdep, kmemleak) boots far slower.
DEBUG_BOOT_TIMEOUT = 600


class GuestDied(Exception):
    """The guest's QEMU exited, or its agent stopped answering."""


class Agent:
    """Host end of a guest's rtrs.ctl port (see scripts/guest/agent)."""

    def __init__(self, path, guest):
        self.path = path
        self.guest = guest
        self.sock = None
        self.buf = b""
        self.seq = 0

    def connect(self, deadline):
        while True:
            self.guest.check_alive()
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.path)
                self.sock = s
                return
            except OSError:
                s.close()
                if time.monotonic() > deadline:
                    raise GuestDied(f"{self.guest.name}: no control socket")
                time.sleep(0.2)

    def _send(self, line):
        self.sock.sendall(line.encode() + b"\n")

    def _readline(self, deadline):
        while b"\n" not in self.buf:
            self.guest.check_alive()
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.sock], [], [], min(left, 1.0))
            if r:
                data = self.sock.recv(65536)
                if not data:
                    raise GuestDied(f"{self.guest.name}: control socket closed")
                self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode(errors="replace")

    def wait_ready(self, deadline):
        """PING until the agent answers: the guest has booted."""
        while True:
            self.seq += 1
            tag = f"p{self.seq}"
            self._send(f"PING {tag}")
            step = min(time.monotonic() + 2, deadline)
            while True:
                line = self._readline(step)
                if line is None:
                    break
                if line == f"PONG {tag}":
                    return
            if time.monotonic() >= deadline:
                raise GuestDied(f"{self.guest.name}: agent did not answer in time")

    def run(self, script, timeout, on_output=None):
        """Run a shell script in the guest; return (status, output bytes).

        The guest kills the script after ``timeout`` seconds (status 124).
        GuestDied if no answer comes at all: the guest hangs or crashed.
        """
        self.seq += 1
        tag = f"r{self.seq}"
        verb = "RUNS" if on_output else "RUN"
        b64 = base64.b64encode(script.encode()).decode()
        self._send(f"{verb} {tag} {int(timeout)} {b64}")
        deadline = time.monotonic() + timeout + 30
        out = bytearray()
        while True:
            line = self._readline(deadline)
            if line is None:
                raise GuestDied(f"{self.guest.name}: no answer {timeout + 30}s after RUN")
            parts = line.split(" ")
            if len(parts) < 2 or parts[1] != tag:
                continue  # a stale answer to an earlier request
            if parts[0] == "OUT" and len(parts) == 3:
                chunk = base64.b64decode(parts[2])
                out += chunk
                if on_output:
                    on_output(chunk)
            elif parts[0] == "DONE" and len(parts) == 3:
                return int(parts[2]), bytes(out)

    def close(self):
        if self.sock:
            self.sock.close()
            self.sock = None


class Nic:
    """One end of a link: the guest's virtio NIC and its QEMU netdev."""

    def __init__(self, netdev, mac, v4, v6):
        self.netdev = netdev    # "listen=127.0.0.1:<port>" or "connect=..."
        self.mac = mac
        self.v4 = v4            # address/prefix
        self.v6 = v6
        self.peer = None        # (guest name, NIC index) of the other end


class Guest:
    def __init__(self, name, workdir, smp=2, mem=2048, disk=False):
        self.name = name
        self.workdir = workdir
        self.smp = smp
        self.mem = mem
        self.disk = os.path.join(workdir, f"{name}.disk") if disk else None
        self.nics = []
        # (port name, chardev options without id) of its rtrs.to.* and
        # rtrs.peer console ports.
        self.ports = []
        self.console = os.path.join(workdir, f"{name}.console")
        self.ctl_path = os.path.join(workdir, f"{name}.ctl")
        self.qmp_path = os.path.join(workdir, f"{name}.qmp")
        self.proc = None
        self.agent = Agent(self.ctl_path, self)

    @property
    def link_ips(self):
        return [n.v4.split("/")[0] for n in self.nics]

    def listening(self):
        """The TCP ports and unix sockets this guest's QEMU listens on."""
        tcp = [int(n.netdev.rsplit(":", 1)[1]) for n in self.nics if n.netdev.startswith("listen=")]
        unix = [c.split("path=", 1)[1].split(",")[0] for _, c in self.ports if "server=on" in c]
        return tcp, unix

    def start(self, kernel, initrd, append=""):
        for p in (self.ctl_path, self.qmp_path):
            if os.path.exists(p):
                os.unlink(p)
        cmdline = (f"console=ttyS0 panic=-1 rtrs.role={self.name} "
                   f"rtrs.ip={','.join(n.v4 for n in self.nics)} "
                   f"rtrs.ip6={','.join(n.v6 for n in self.nics)} {append}")
        cmd = [
            "qemu-system-x86_64",
            "-name", f"rtrs-{self.name}",
            "-accel", "tcg,thread=multi", "-cpu", "max",
            "-smp", str(self.smp), "-m", str(self.mem),
            "-nodefaults", "-display", "none", "-no-reboot", "-monitor", "none",
            "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
            "-kernel", kernel, "-initrd", initrd,
            "-append", cmdline.strip(),
            "-chardev", f"file,id=con,path={self.console},append=on",
            "-serial", "chardev:con",
            "-device", "virtio-rng-pci,addr=0x3",
            "-device", "virtio-serial-pci,addr=0x4",
            "-chardev", f"socket,id=ctl,path={self.ctl_path},server=on,wait=off",
            "-device", "virtserialport,chardev=ctl,name=rtrs.ctl",
        ]
        for i, (name, chardev) in enumerate(self.ports):
            cmd += ["-chardev", f"socket,id=p{i},{chardev}",
                    "-device", f"virtserialport,chardev=p{i},name={name}"]
        if self.disk:
            cmd += ["-drive", f"file={self.disk},if=virtio,format=raw"]
        for i, nic in enumerate(self.nics):
            cmd += ["-netdev", f"socket,id=l{i},{nic.netdev}",
                    "-device",
                    f"virtio-net-pci,id=nic{i},netdev=l{i},addr={0x10 + i:#x},mac={nic.mac}"]
        log = open(os.path.join(self.workdir, f"{self.name}.qemu.log"), "w")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def check_alive(self):
        if self.proc is None or self.proc.poll() is not None:
            rc = None if self.proc is None else self.proc.returncode
            raise GuestDied(f"{self.name}: QEMU exited (status {rc})")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def set_link(self, link, up):
        """Carrier of the NIC of <link> on or off (QMP set_link), as a cable
        pulled and plugged in again: the guest sees it, nothing else changes."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect(self.qmp_path)
            f = s.makefile("rw")
            f.readline()  # the greeting
            for cmd in ('{"execute": "qmp_capabilities"}',
                        '{"execute": "set_link", "arguments": '
                        f'{{"name": "nic{link}", "up": {"true" if up else "false"}}}}}'):
                f.write(cmd + "\n")
                f.flush()
                while True:
                    line = f.readline()
                    if not line:
                        raise GuestDied(f"{self.name}: QMP closed")
                    if '"return"' in line:
                        break
                    if '"error"' in line:
                        raise GuestDied(f"{self.name}: QMP: {line.strip()}")
        except OSError as e:
            raise GuestDied(f"{self.name}: QMP: {e}")
        finally:
            s.close()

    def kill(self):
        """SIGKILL its QEMU: the machine stops dead, as in a power cut."""
        self.agent.close()
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        self.agent.close()
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def console_size(self):
        try:
            return os.path.getsize(self.console)
        except OSError:
            return 0

    def console_since(self, offset):
        try:
            with open(self.console, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace")
        except OSError:
            return ""


def _free_port():
    for _ in range(100):
        port = random.randint(20000, 59999)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free TCP port on 127.0.0.1")


def _listening(port):
    want = f"0100007F:{port:04X}"
    try:
        with open("/proc/net/tcp") as f:
            return any(l.split()[1] == want and l.split()[3] == "0A"
                       for l in f.readlines()[1:])
    except OSError:
        return False


def _set_nodelay(pid, ports):
    """Turn Nagle's algorithm off on the TCP sockets of process <pid> whose
    local port is one of <ports>: the links' connections a listening QEMU
    accepted. QEMU 7.2 sets TCP_NODELAY on the connections of ``connect=``
    but not on those it accepts, so every small frame the client guest sends
    waits for the server's host to acknowledge the previous one: a 4k read at
    QD1 took 43 ms over such a link, and 1.7 ms with this. The sockets are
    reached with pidfd_getfd(2) (Linux 5.6, ptrace rights over the process);
    returns how many connected ones were set."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    sys_pidfd_getfd = 438  # x86_64
    pidfd = os.pidfd_open(pid)
    n = 0
    try:
        for name in os.listdir(f"/proc/{pid}/fd"):
            try:
                if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                    continue
            except OSError:
                continue
            fd = libc.syscall(sys_pidfd_getfd, pidfd, int(name), 0)
            if fd < 0:
                raise OSError(ctypes.get_errno(), f"pidfd_getfd({pid}, {name})")
            s = socket.socket(fileno=fd)
            try:
                if (s.family == socket.AF_INET and s.type == socket.SOCK_STREAM
                        and s.getsockname()[1] in ports):
                    # The listening socket too: what it accepts later
                    # (the server booted again) inherits the option.
                    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    s.getpeername()
                    n += 1
            except OSError:
                pass  # not connected: the listening socket
            finally:
                s.close()  # our duplicate only
    finally:
        os.close(pidfd)
    return n


def link_addrs(pair, link):
    """The addresses, with their prefix lengths, of link <link> between the
    server and the client of pair <pair> (``Topology.pairs``' index): (server
    IPv4, client IPv4, server IPv6, client IPv6)."""
    if not 0 <= link < MAX_LINKS:
        raise ValueError(f"link {link}: at most {MAX_LINKS} links per pair")
    if pair == 0 and link < len(LINKS):
        s4, c4 = (f"{a}/24" for a in LINKS[link])
    else:
        i = pair * MAX_LINKS + link - len(LINKS)
        if i >= 64:
            raise ValueError(f"pair {pair}, link {link}: past 203.0.113.0/24")
        s4, c4 = f"203.0.113.{4 * i + 1}/30", f"203.0.113.{4 * i + 2}/30"
    v6 = [f"{ipaddress.IPv6Address(f'2001:db8:{pair:x}:{link:x}::{h}')}/64" for h in (1, 2)]
    return s4, c4, v6[0], v6[1]


class Topology:
    """S server and C client guests, every client linked to every server by
    L links (see the module's description), booted together.

    Guests are named server, server2, ... and client, client2, ...; the
    first client runs the tests. ``client_smp`` gives the clients another
    vCPU count than ``smp``. With ``nodelay``, the links' TCP connections
    have Nagle's algorithm off on both sides (see ``_set_nodelay``): what
    scripts/bench and scripts/io-count measure with. The selftests run on
    the links as QEMU makes them."""

    def __init__(self, kernel, initrd, workdir, servers=1, clients=1, links=2, smp=2,
                 mem=2048, append="", nodelay=False, client_smp=None):
        if servers < 1 or clients < 1 or not 1 <= links <= MAX_LINKS:
            raise ValueError(f"{servers} servers, {clients} clients, {links} links")
        self.nodelay = nodelay
        self.kernel = kernel
        self.initrd = initrd
        self.workdir = workdir
        self.boot_timeout = BOOT_TIMEOUT
        # Legacy PCI interrupt routing (acpi=noirq): under TCG, the ACPI
        # methods that route them on QEMU's i440fx (_PRT, the LNKx links)
        # take 10 to 30 s of a guest's boot, more with several guests
        # booting at once; under KASAN and lockdep ACPICA's 30 s loop
        # timeout ends them before they are done, and the virtio devices
        # get no interrupt.
        append = f"acpi=noirq {append}".strip()
        if debug_kernel(kernel):
            self.boot_timeout = DEBUG_BOOT_TIMEOUT
        self.shape = (servers, clients, links)
        self.append = f"rtrs.topo={servers},{clients},{links} {append}".strip()
        number = lambda base, n: [base] + [f"{base}{i}" for i in range(2, n + 1)]  # noqa: E731
        self.server_names = number("server", servers)
        self.client_names = number("client", clients)
        self.by_name = {}
        for n in self.server_names:
            self.by_name[n] = Guest(n, workdir, smp, mem, disk=True)
        for n in self.client_names:
            self.by_name[n] = Guest(n, workdir, client_smp or smp, mem)
        self.pairs = [(s, c) for s in self.server_names for c in self.client_names]
        self.boots = 0

    @property
    def guests(self):
        """Servers first, then clients."""
        return tuple(self.by_name[n] for n in self.server_names + self.client_names)

    @property
    def server(self):
        return self.by_name["server"]

    @property
    def client(self):
        """The guest the tests run in."""
        return self.by_name["client"]

    def _wire(self):
        """Fresh ports for every link and peer channel, and each guest's
        NICs: ordered by peer, then link (a server's by client, a client's
        by server); the first client listens on all of its sockets, a server
        on the links of the other clients."""
        _, _, links = self.shape
        number = {n: i + 1 for i, n in enumerate(self.server_names + self.client_names)}
        ports = {(p, k): _free_port() for p in range(len(self.pairs)) for k in range(links)}

        def ends(name):
            if name in self.server_names:
                return [(self.pairs.index((name, c)), c) for c in self.client_names]
            return [(self.pairs.index((s, name)), s) for s in self.server_names]

        for g in self.by_name.values():
            g.nics, g.ports = [], []
            for p, other in ends(g.name):
                s, c = self.pairs[p]
                listener = c if c == "client" else s
                mode = "listen" if g.name == listener else "connect"
                for k in range(links):
                    s4, c4, s6, c6 = link_addrs(p, k)
                    v4, v6 = (s4, s6) if g.name == s else (c4, c6)
                    nic = Nic(f"{mode}=127.0.0.1:{ports[p, k]}",
                              f"52:54:00:12:{len(g.nics):02x}:{number[g.name]:02x}", v4, v6)
                    # The other end's index: its NICs go by peer in the
                    # same way.
                    j = [q for q, _ in ends(other)].index(p) * links + k
                    nic.peer = (other, j)
                    g.nics.append(nic)
        for name, g in self.by_name.items():
            if name == "client":
                continue
            sock = os.path.join(self.workdir, f"peer-{name}.sock")
            if os.path.exists(sock):
                os.unlink(sock)
            self.client.ports.append((f"rtrs.to.{name}", f"path={sock},server=on,wait=off"))
            g.ports.append(("rtrs.peer", f"path={sock}"))

    def start(self):
        self.boots += 1
        self._wire()
        for g in self.by_name.values():
            if g.disk:
                with open(g.disk, "wb") as f:
                    f.truncate(SERVER_DISK_BYTES)
        # Listeners first: the first client, then the servers, then the
        # other clients.
        for name in ["client"] + self.server_names + self.client_names[1:]:
            self._start_guest(name)
        deadline = time.monotonic() + self.boot_timeout
        for g in self.guests:
            g.agent.connect(deadline)
        for g in self.guests:
            g.agent.wait_ready(deadline)
        self._links_nodelay()

    def _start_guest(self, name):
        g = self.by_name[name]
        g.start(self.kernel, self.initrd, self.append)
        tcp, unix = g.listening()
        deadline = time.monotonic() + 30
        while not (all(_listening(p) for p in tcp) and all(os.path.exists(u) for u in unix)):
            g.check_alive()
            if time.monotonic() > deadline:
                raise GuestDied(f"{name}: QEMU did not open its sockets")
            time.sleep(0.1)

    def restartable(self, name):
        """Whether guest <name> only connects, so can be booted again alone."""
        tcp, unix = self.by_name[name].listening()
        return not tcp and not unix

    def kill_guest(self, name):
        """Kill the QEMU of guest <name>; the others run on."""
        self.by_name[name].kill()

    def start_guest(self, name):
        """Boot guest <name> again, on the same links and disk, and wait
        until its agent answers."""
        if not self.restartable(name):
            raise GuestDied(f"{name}: listens for other guests, cannot be booted alone")
        g = self.by_name[name]
        g.kill()
        self._start_guest(name)
        deadline = time.monotonic() + self.boot_timeout
        g.agent.connect(deadline)
        g.agent.wait_ready(deadline)
        self._links_nodelay()

    def kill_server(self):
        self.kill_guest("server")

    def start_server(self):
        self.start_guest("server")

    def set_link(self, link, up, guest="client"):
        """The cable of NIC <link> of <guest> (the first client's, unless
        told) pulled (up=False) or plugged in again: the NICs at both ends
        lose or regain their carrier."""
        g = self.by_name[guest]
        other, k = g.nics[link].peer
        g.set_link(link, up)
        self.by_name[other].set_link(k, up)

    def _links_nodelay(self):
        """Every guest has connected its links: Nagle off on the listening
        QEMUs' ends of them too."""
        if not self.nodelay:
            return
        for g in self.guests:
            tcp, _ = g.listening()
            if tcp:
                n = _set_nodelay(g.proc.pid, set(tcp))
                if n != len(tcp):
                    raise RuntimeError(f"{g.name}: TCP_NODELAY set on {n} of its {len(tcp)} links")

    def stop(self):
        for g in reversed(self.guests):
            g.stop()

    def restart(self):
        self.stop()
        self.start()


class Pair(Topology):
    """One server and one client over two links: the usual shape."""

    def __init__(self, kernel, initrd, workdir, smp=2, mem=2048, append="", nodelay=False):
        super().__init__(kernel, initrd, workdir, smp=smp, mem=mem, append=append,
                         nodelay=nodelay)


def build_initrd(kdir, modules_dir, selftests_dir, extra_files, workdir, cache):
    """Concatenate the cached base archive and a fresh overlay into one initrd.
    The overlay is /opt/rtrs-rs: modules/, selftests/, and each of
    extra_files (a file, or a directory with what is below it)."""
    scripts = os.path.dirname(os.path.abspath(__file__))
    base = os.path.join(cache, "initramfs", "base.cpio")
    os.makedirs(os.path.dirname(base), exist_ok=True)
    subprocess.run([os.path.join(scripts, "initramfs"), "base", kdir, base], check=True)
    stage = os.path.join(workdir, "overlay")
    shutil.rmtree(stage, ignore_errors=True)
    os.makedirs(os.path.join(stage, "modules"))
    if modules_dir and os.path.isdir(modules_dir):
        for f in sorted(os.listdir(modules_dir)):
            if f.endswith(".ko"):
                shutil.copy(os.path.join(modules_dir, f), os.path.join(stage, "modules"))
    shutil.copytree(selftests_dir, os.path.join(stage, "selftests"),
                    ignore=shutil.ignore_patterns("kselftest_install"))
    for f in extra_files:
        if os.path.isdir(f):
            shutil.copytree(f, os.path.join(stage, os.path.basename(f)), symlinks=True)
        else:
            shutil.copy(f, stage)
    overlay = os.path.join(workdir, "overlay.cpio")
    subprocess.run([os.path.join(scripts, "initramfs"), "overlay", overlay, stage], check=True)
    initrd = os.path.join(workdir, "initrd.cpio")
    with open(initrd, "wb") as out:
        for part in (base, overlay):
            with open(part, "rb") as f:
                shutil.copyfileobj(f, out)
    return initrd


def kernel_image(kdir):
    return os.path.join(kdir, "arch", "x86", "boot", "bzImage")


def debug_kernel(image):
    """Whether <image> (a tree's arch/x86/boot/bzImage) was built with KASAN,
    as scripts/build-kernel's debug profile is."""
    kdir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(image))))
    try:
        with open(os.path.join(kdir, ".config")) as f:
            return "\nCONFIG_KASAN=y\n" in f.read()
    except OSError:
        return False


def install_signal_handlers(pair):
    def handler(signum, _frame):
        pair.stop()
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
