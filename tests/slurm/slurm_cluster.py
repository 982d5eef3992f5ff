"""A real Slurm on this machine for the fleet tests: a private munged, one slurmctld and several
`slurmd -N nK` (Debian's slurm-wlm is built with multiple-slurmd support), each node with fake GPU
character devices made by mknod, all under one temporary folder with ports of its own and a cluster
name of its own, so that two test runs never share a daemon, a port or a state file.

Nothing here uses cgroups (proctrack/linuxproc, task/none), so it runs in a container as root.
Each daemon is stopped by its PID at the end, whatever happened. A TaskProlog gives every task the
driver doubles' scenario of its node: $T/scenarios/<node>.toml (SLURMD_NODENAME is what Slurm sets),
and the node's name as the doubles' machine (GPUVET_FAKE_MACHINE), so each node's GPUs have UUIDs
and serials of their own, as separate servers' do.

Waits poll for their condition; their limits are generous (a 2-core machine running the whole suite
reaches a load near 10) and scale with GPUVET_TEST_TIMEOUT_FACTOR, as the tests' CTest limit does.
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time

SLURM_BINARIES = ("slurmctld", "slurmd", "srun", "scontrol", "sinfo", "squeue", "munged", "mungekey")
FACTOR = float(os.environ.get("GPUVET_TEST_TIMEOUT_FACTOR", "1") or "1")


def scaled(seconds):
    """A wait's limit on this machine: `seconds` times GPUVET_TEST_TIMEOUT_FACTOR."""
    return seconds * FACTOR


def missing_binaries():
    return [b for b in SLURM_BINARIES if shutil.which(b) is None and not os.path.exists("/usr/sbin/" + b)]


def _ephemeral_range():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low, high = (int(x) for x in f.read().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


def _bindable(port):
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", port))  # the daemons listen on every address
        return True
    except OSError:
        return False
    finally:
        s.close()


def free_ports(n):
    """n distinct ports that nothing listens on, drawn below the kernel's ephemeral range: a port
    the kernel hands out to connections and bind(0) (every other test's sockets) could be taken
    between this check and the daemons' own bind, one below the range only by a program that names
    it. Cluster start-up still retries with fresh ports when a daemon finds its port taken."""
    low, _ = _ephemeral_range()
    top = max(low - 1, 12000)
    ports = []
    while len(ports) < n:
        p = random.randint(10000, top)
        if p not in ports and _bindable(p):
            ports.append(p)
    return ports


def sbin(name):
    return shutil.which(name) or "/usr/sbin/" + name


class PortTaken(RuntimeError):
    """A daemon could not bind its port: start again with others."""


class Cluster:
    """Start with `with Cluster(["n1", "n2", "n3"], gpus_per_node=2) as c:`; c.env() is the
    environment in which srun/scontrol talk to this cluster."""

    def __init__(self, nodes, gpus_per_node=2, broken_gres_nodes=(), health_check=None, health_interval_s=0,
                 prolog=None, scenarios=None):
        """health_check, prolog: the HealthCheckProgram's and the Prolog's text ({dir} is the
        cluster's folder, {conf} its slurm.conf); scenarios: {node: scenario file} in place before
        the daemons start."""
        self.nodes = list(nodes)
        self.broken = set(broken_gres_nodes)  # regular files as GPUs: Slurm drops them
        self.gpus = gpus_per_node
        self.health_check = health_check
        self.health_interval_s = health_interval_s
        self.prolog = prolog
        self.initial_scenarios = dict(scenarios or {})
        self.procs = []
        self.dir = None

    # --- set-up -------------------------------------------------------------------------------

    def __enter__(self):
        for attempt in range(3):
            try:
                self._start()
                return self
            except PortTaken:
                self.stop(keep=False)
                if attempt == 2:
                    raise
            except BaseException:
                self.stop()
                raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _start(self):
        # Under /tmp, whatever TMPDIR says: munged's and slurmstepd's sockets live in this folder, and
        # a socket path has at most 107 characters.
        self.dir = tempfile.mkdtemp(prefix="gpuvet-slurm-", dir="/tmp" if os.path.isdir("/tmp") else None)
        os.chmod(self.dir, 0o755)  # munged refuses a socket folder others cannot traverse
        self.name = "gv" + os.path.basename(self.dir)[-8:].lower().replace("_", "x")
        for sub in ("ctld", "munge", "scenarios", "log", "roots", "nccl"):
            os.makedirs(self.path(sub), mode=0o755)
        self._start_munge()
        self._make_gpus()
        self._write_conf()
        for node, path in self.initial_scenarios.items():
            self.set_scenario(node, path)
        self._start_daemons()
        self.wait_idle(self.nodes, allow_drain=True)  # a health check may drain a node at once

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def _start_munge(self):
        key = self.path("munge", "munge.key")
        subprocess.run([sbin("mungekey"), "--create", "--keyfile", key], check=True, capture_output=True)
        os.chmod(key, 0o600)
        self.munge_socket = self.path("munge", "munge.socket")
        p = subprocess.Popen(
            [sbin("munged"), "--foreground", "--force", "--socket", self.munge_socket, "--key-file", key,
             "--pid-file", self.path("munge", "munged.pid"), "--log-file", self.path("log", "munged.log"),
             "--seed-file", self.path("munge", "munged.seed")],
            stdout=subprocess.DEVNULL, stderr=open(self.path("log", "munged.stderr"), "w"))
        self.procs.append(p)
        self._poll(lambda: os.path.exists(self.munge_socket), scaled(60), "munged's socket", p)

    def _make_gpus(self):
        for n in self.nodes:
            d = self.path("fakegpu", n)
            os.makedirs(d)
            for i in range(self.gpus):
                f = os.path.join(d, f"nvidia{i}")
                if n in self.broken:
                    open(f, "w").close()
                else:
                    os.mknod(f, 0o666 | 0o020000, os.makedev(1, 3))  # a /dev/null clone

    def _script(self, name, text):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text.format(dir=self.dir, conf=self.conf))
        os.chmod(path, 0o755)
        return path

    def _write_conf(self):
        ports = free_ports(1 + len(self.nodes))
        self.ctld_port = ports[0]
        self.conf = self.path("slurm.conf")
        lines = [
            f"ClusterName={self.name}", "SlurmctldHost=localhost", "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/munge", f"AuthInfo=socket={self.munge_socket}", "CredType=cred/munge",
            f"StateSaveLocation={self.path('ctld')}", f"SlurmdSpoolDir={self.path('d.%n')}",
            f"SlurmdPidFile={self.path('d.%n.pid')}", f"SlurmdLogFile={self.path('log', 'd.%n.log')}",
            f"SlurmctldPidFile={self.path('ctld.pid')}", f"SlurmctldLogFile={self.path('log', 'ctld.log')}",
            f"SlurmctldPort={self.ctld_port}", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
            "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "GresTypes=gpu", "MpiDefault=none",
            "ReturnToService=2", "JobAcctGatherType=jobacct_gather/none", "SchedulerParameters=nohold_on_prolog_fail",
            "SlurmctldTimeout=30", "SlurmdTimeout=60", "MessageTimeout=20", "KillWait=5", "InactiveLimit=0",
            f"TaskProlog={self.path('task_prolog.sh')}", "SlurmctldDebug=info", "SlurmdDebug=info",
        ]
        if self.health_check:
            hc = self._script("health_check.sh", self.health_check)
            lines += [f"HealthCheckProgram={hc}", f"HealthCheckInterval={self.health_interval_s}",
                      "HealthCheckNodeState=ANY"]
        if self.prolog:
            lines.append(f"Prolog={self._script('prolog.sh', self.prolog)}")
        for n, port in zip(self.nodes, ports[1:]):
            lines.append(f"NodeName={n} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} CPUs=2 "
                         f"RealMemory=1000 Gres=gpu:{self.gpus} State=UNKNOWN")
        good = [n for n in self.nodes if n not in self.broken]
        lines.append(f"PartitionName=gpu Nodes={','.join(good)} Default=YES MaxTime=INFINITE State=UP")
        if self.broken:
            lines.append(f"PartitionName=broken Nodes={','.join(sorted(self.broken))} MaxTime=INFINITE State=UP")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(self.path("gres.conf"), "w") as f:
            for n in self.nodes:
                f.write(f"NodeName={n} Name=gpu File={self.path('fakegpu', n)}/nvidia[0-{self.gpus - 1}]\n")
        self._script("task_prolog.sh",
                     "#!/bin/sh\n# The driver doubles' machine of this node, by the name Slurm gives it; its sysfs\n"
                     "# fixture (GPUVET_ROOT: host.fabric and the NCCL and verbs doubles read its NICs) when\n"
                     "# set_root gave it one; the folder where the NCCL double's ranks meet.\n"
                     'echo "export GPUVET_FAKE_SCENARIO={dir}/scenarios/$SLURMD_NODENAME.toml"\n'
                     'echo "export GPUVET_FAKE_MACHINE=$SLURMD_NODENAME"\n'
                     'echo "export GPUVET_FAKE_NCCL_DIR={dir}/nccl"\n'
                     'if [ -f {dir}/roots/$SLURMD_NODENAME ]; then echo "export GPUVET_ROOT=$(cat '
                     '{dir}/roots/$SLURMD_NODENAME)"; fi\n')

    def env(self, extra=None):
        """This cluster's client environment, as on a clean login node: no SLURM_* of an outer job,
        no CUDA_VISIBLE_DEVICES (a test that wants one passes it in `extra`)."""
        e = dict(os.environ)
        for k in list(e):
            if k.startswith("SLURM_") or k in ("CUDA_VISIBLE_DEVICES", "GPUVET_FAKE_MACHINE"):
                del e[k]
        e["SLURM_CONF"] = self.conf
        if extra:
            e.update(extra)
        return e

    def _daemon(self, args, log):
        # What slurmd starts (the prolog, the health check) never reaches the user's own history.
        env = self.env({"GPUVET_HISTORY_DB": self.path("daemons-history.sqlite")})
        p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL,
                             stderr=open(self.path("log", log), "w"), start_new_session=True)
        self.procs.append(p)
        return p

    def _start_daemons(self):
        ctld = self._daemon([sbin("slurmctld"), "-D", "-i", "-f", self.conf], "ctld.stderr")

        def up():
            r = self.scontrol("ping")
            return r.returncode == 0 and "UP" in r.stdout

        self._poll(up, scaled(120), "slurmctld", ctld)
        for n in self.nodes:
            self._daemon([sbin("slurmd"), "-D", "-N", n, "-f", self.conf], f"d.{n}.stderr")

    def _poll(self, cond, timeout_s, what, proc=None):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if cond():
                return
            if proc is not None and proc.poll() is not None:
                break
            dead = [p for p in self.procs if p.poll() is not None]
            if dead and self._port_taken():
                raise PortTaken(f"a daemon's port was taken while {what} came up")
            time.sleep(0.2)
        raise RuntimeError(f"{what} did not come up within {timeout_s} s; logs in {self.dir}/log:\n" + self.logs())

    def _port_taken(self):
        for f in os.listdir(self.path("log")):
            with open(self.path("log", f), errors="replace") as h:
                if "Address already in use" in h.read():
                    return True
        return False

    def logs(self):
        out = []
        for f in sorted(os.listdir(self.path("log"))):
            with open(self.path("log", f), errors="replace") as h:
                out.append(f"--- {f}\n" + h.read()[-3000:])
        return "\n".join(out)

    # --- use ----------------------------------------------------------------------------------

    def run(self, *args, timeout=None, env=None, **kw):
        return subprocess.run(list(args), env=self.env(env), capture_output=True, text=True,
                              timeout=timeout or scaled(180), **kw)

    def scontrol(self, *args):
        return self.run("scontrol", *args, timeout=scaled(60))

    def node_state(self, node):
        """(state, reason) as `scontrol show node` prints them."""
        out = self.scontrol("show", "node", node).stdout
        fields = {}
        for tok in out.replace("\n", " ").split(" "):
            if "=" in tok:
                k, v = tok.split("=", 1)
                fields.setdefault(k, v)
        reason = ""
        if "Reason=" in out:
            reason = out.split("Reason=", 1)[1].split("\n")[0]
            reason = reason.rsplit(" [", 1)[0].strip()  # drop " [root@time]"
        return fields.get("State", ""), reason

    def poll(self, cond, timeout_s, what):
        """Waits until cond() holds (checked every 0.2 s), at most scaled(timeout_s); else an
        AssertionError that says `what` and ends with the daemons' logs."""
        deadline = time.monotonic() + scaled(timeout_s)
        while time.monotonic() < deadline:
            if cond():
                return
            time.sleep(0.2)
        raise AssertionError(f"{what} within {scaled(timeout_s):.0f} s; logs in {self.dir}/log:\n" + self.logs())

    def wait_idle(self, nodes, timeout_s=180, allow_drain=False):
        def idle():
            for n in nodes:
                state, _ = self.node_state(n)
                if not state.startswith("IDLE") or (not allow_drain and "DRAIN" in state) or "NOT_RESPONDING" in state:
                    return False
            return True

        self._poll(idle, scaled(timeout_s), "nodes " + ",".join(nodes) + " idle")

    def set_scenario(self, node, toml_path):
        shutil.copyfile(toml_path, self.path("scenarios", node + ".toml"))

    def set_root(self, node, root):
        """The sysfs fixture tree node `node`'s tasks read (GPUVET_ROOT); None: the machine's own."""
        path = self.path("roots", node)
        if root is None:
            if os.path.exists(path):
                os.remove(path)
            return
        with open(path, "w") as f:
            f.write(os.path.abspath(root))

    def steps(self):
        """The job steps squeue lists (running or completing), the extern steps left out."""
        out = self.run("squeue", "-h", "-s", "-o", "%i %j").stdout
        return [l for l in out.splitlines() if l.strip() and not l.split()[0].endswith(".extern")]

    def jobs(self):
        """The jobs squeue lists, with their state (PENDING, RUNNING, COMPLETING...)."""
        return [l for l in self.run("squeue", "-h", "-o", "%i %T").stdout.splitlines() if l.strip()]

    def wait_no_jobs(self, timeout_s=120):
        """Until squeue lists no job and no step: a cancelled job stays COMPLETING until its
        slurmstepd have ended (KillWait, the epilog), which takes longer on a loaded machine."""
        self.poll(lambda: not self.jobs() and not self.steps(), timeout_s, "jobs or steps still listed: "
                  f"{self.jobs()} {self.steps()}")

    def processes(self, comm):
        """PIDs of processes named `comm` that talk to this cluster (SLURM_CONF is its slurm.conf)."""
        mark = ("SLURM_CONF=" + self.conf).encode()
        out = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() != comm:
                        continue
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if mark in f.read().split(b"\0"):
                        out.append(int(pid))
            except OSError:
                continue
        return out

    def drain(self, node, reason):
        r = self.scontrol("update", f"NodeName={node}", "State=DRAIN", f"Reason={reason}")
        assert r.returncode == 0, r.stderr

    def resume(self, node):
        self.scontrol("update", f"NodeName={node}", "State=RESUME")

    # --- tear-down ----------------------------------------------------------------------------

    def stop(self, keep=True):
        """Stops everything this cluster started, by PID; keep=False removes the folder even with
        GPUVET_KEEP_SLURM (a start abandoned for a taken port)."""
        if self.procs and self.dir and os.path.exists(self.path("slurm.conf")):
            try:  # the jobs first: their slurmstepd outlive slurmd
                self.run("scancel", "--full", "-u", "root", timeout=30)
                deadline = time.monotonic() + 20
                while self.jobs() and time.monotonic() < deadline:
                    time.sleep(0.5)
            except Exception:  # noqa: BLE001 - tearing down whatever is there
                pass
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 15
        for p in reversed(self.procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.kill(p.pid, signal.SIGKILL)
                p.wait()
        self.procs = []
        if self.dir and os.path.exists(self.path("slurm.conf")):
            for comm in ("slurmstepd", "srun"):  # what outlived its daemon: this cluster's only
                for pid in self.processes(comm):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
        if self.dir and (not keep or not os.environ.get("GPUVET_KEEP_SLURM")):
            shutil.rmtree(self.dir, ignore_errors=True)
        elif self.dir:
            print(f"slurm cluster kept in {self.dir}")
