"""The rtrs-rs VM pair: a server and a client guest linked by QEMU.

Each guest has two virtio NICs, one per RDMA link, each joined to the other
guest's by a QEMU ``socket`` netdev on 127.0.0.1 (no slirp, no tap: nothing
reaches the host's network):

    link 0: server 192.0.2.1     <-> client 192.0.2.2
    link 1: server 198.51.100.1  <-> client 198.51.100.2

and two virtio console ports served by scripts/guest/agent:

    rtrs.ctl   host <-> guest, a unix socket this module talks to
    rtrs.peer  client guest <-> server guest, for tests that drive both sides

The client's QEMU listens on the link and peer sockets and the server's
connects: a listening QEMU accepts a new connection when the old one ends, so
the server guest can be killed and booted again (``kill_server``,
``start_server``) while the client guest runs on, as a crashed storage server
would be. The server has a disk, /dev/vda, backed by ``<workdir>/server.disk``,
which outlives its QEMU: what it completed before a kill is there after.

The serial console of each guest is appended to ``<workdir>/<name>.console``.
Guests run under TCG: ``-enable-kvm`` hangs these machines' guests.
"""

import base64
import os
import random
import select
import shutil
import signal
import socket
import subprocess
import time

LINKS = [("192.0.2.1", "192.0.2.2"), ("198.51.100.1", "198.51.100.2")]
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


class Guest:
    def __init__(self, name, link_ips, workdir):
        self.name = name
        self.link_ips = link_ips
        self.workdir = workdir
        self.console = os.path.join(workdir, f"{name}.console")
        self.ctl_path = os.path.join(workdir, f"{name}.ctl")
        self.qmp_path = os.path.join(workdir, f"{name}.qmp")
        self.proc = None
        self.agent = Agent(self.ctl_path, self)

    def start(self, kernel, initrd, netdevs, peer_chardev, smp, mem, append="", disk=None):
        for p in (self.ctl_path, self.qmp_path):
            if os.path.exists(p):
                os.unlink(p)
        cmd = [
            "qemu-system-x86_64",
            "-name", f"rtrs-{self.name}",
            "-accel", "tcg,thread=multi", "-cpu", "max",
            "-smp", str(smp), "-m", str(mem),
            "-nodefaults", "-display", "none", "-no-reboot", "-monitor", "none",
            "-qmp", f"unix:{self.qmp_path},server=on,wait=off",
            "-kernel", kernel, "-initrd", initrd,
            "-append",
            f"console=ttyS0 panic=-1 rtrs.role={self.name} "
            f"rtrs.ip={','.join(self.link_ips)} {append}".strip(),
            "-chardev", f"file,id=con,path={self.console},append=on",
            "-serial", "chardev:con",
            "-device", "virtio-rng-pci,addr=0x3",
            "-device", "virtio-serial-pci,addr=0x4",
            "-chardev", f"socket,id=ctl,path={self.ctl_path},server=on,wait=off",
            "-device", "virtserialport,chardev=ctl,name=rtrs.ctl",
            "-chardev", peer_chardev,
            "-device", "virtserialport,chardev=peer,name=rtrs.peer",
        ]
        if disk:
            cmd += ["-drive", f"file={disk},if=virtio,format=raw"]
        for i, nd in enumerate(netdevs):
            host = 1 if self.name == "server" else 2
            cmd += ["-netdev", f"socket,id=l{i},{nd}",
                    "-device",
                    f"virtio-net-pci,id=nic{i},netdev=l{i},addr={0x10 + i:#x},"
                    f"mac=52:54:00:12:{i:02x}:{host:02x}"]
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


class Pair:
    """The server and client guests, booted together.

    With ``nodelay``, the links' TCP connections have Nagle's algorithm off
    on both sides (see ``_set_nodelay``): what scripts/bench and
    scripts/io-count measure with. The selftests run on the links as QEMU
    makes them."""

    def __init__(self, kernel, initrd, workdir, smp=2, mem=2048, append="", nodelay=False):
        self.nodelay = nodelay
        self.kernel = kernel
        self.initrd = initrd
        self.workdir = workdir
        self.smp = smp
        self.mem = mem
        self.boot_timeout = BOOT_TIMEOUT
        if debug_kernel(kernel):
            # KASAN and lockdep under TCG: ACPICA's 30 s loop timeout ends
            # the PCI interrupt routing method (_PRT) of QEMU's i440fx
            # before it is done, and the virtio devices get no interrupt.
            # Legacy routing (acpi=noirq) does without the method.
            append = f"acpi=noirq {append}".strip()
            self.boot_timeout = DEBUG_BOOT_TIMEOUT
        self.append = append
        self.server = Guest("server", [a for a, _ in LINKS], workdir)
        self.client = Guest("client", [b for _, b in LINKS], workdir)
        self.boots = 0

    @property
    def guests(self):
        return (self.server, self.client)

    def start(self):
        self.boots += 1
        self.peer = os.path.join(self.workdir, "peer.sock")
        if os.path.exists(self.peer):
            os.unlink(self.peer)
        self.ports = [_free_port() for _ in LINKS]
        self.disk = os.path.join(self.workdir, "server.disk")
        with open(self.disk, "wb") as f:
            f.truncate(SERVER_DISK_BYTES)
        self.client.start(self.kernel, self.initrd,
                          [f"listen=127.0.0.1:{p}" for p in self.ports],
                          f"socket,id=peer,path={self.peer},server=on,wait=off",
                          self.smp, self.mem, self.append)
        deadline = time.monotonic() + 30
        while not (all(_listening(p) for p in self.ports) and os.path.exists(self.peer)):
            self.client.check_alive()
            if time.monotonic() > deadline:
                raise GuestDied("client: QEMU did not open its link sockets")
            time.sleep(0.1)
        self._start_server()
        deadline = time.monotonic() + self.boot_timeout
        for g in self.guests:
            g.agent.connect(deadline)
        for g in self.guests:
            g.agent.wait_ready(deadline)
        self._links_nodelay()

    def _start_server(self):
        self.server.start(self.kernel, self.initrd,
                          [f"connect=127.0.0.1:{p}" for p in self.ports],
                          f"socket,id=peer,path={self.peer}",
                          self.smp, self.mem, self.append, disk=self.disk)

    def set_link(self, link, up):
        """The cable of <link> between the guests pulled (up=False) or
        plugged in again: both NICs lose or regain their carrier."""
        for g in self.guests:
            g.set_link(link, up)

    def kill_server(self):
        """Kill the server's QEMU; the client guest runs on."""
        self.server.kill()

    def start_server(self):
        """Boot the server guest again, on the same links and disk, and wait
        until its agent answers."""
        self.server.kill()
        self._start_server()
        deadline = time.monotonic() + self.boot_timeout
        self.server.agent.connect(deadline)
        self.server.agent.wait_ready(deadline)
        self._links_nodelay()

    def _links_nodelay(self):
        """The server's QEMU has connected its links (its guest is up):
        Nagle off on the client QEMU's ends of them too."""
        if not self.nodelay:
            return
        n = _set_nodelay(self.client.proc.pid, set(self.ports))
        if n != len(self.ports):
            raise RuntimeError(f"TCP_NODELAY set on {n} of the {len(self.ports)} links")

    def stop(self):
        for g in reversed(self.guests):
            g.stop()

    def restart(self):
        self.stop()
        self.start()


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
