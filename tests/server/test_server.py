"""`python -m emu serve`: a served command is the cold command, byte for byte.

Each command runs twice as a real process, once with EMU_NO_SERVER=1 and once through a
server started here, each with a fresh image store; stdout, stderr, the exit code and every
file the command wrote must be equal, and the server must say it served the command.  Then
the cases where a client must not use a server: other emu sources, another interpreter
setting, a dead socket, a folder other users can reach.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "cutlass-dsl-4.8.0"
OBJECT = FIXTURES / "x86_64" / "carveout_25.o"


def emu(args: list[str], env: dict, cwd: Path = ROOT, python: list[str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run((python or [sys.executable]) + ["-m", "emu", *args], cwd=cwd, env=env, capture_output=True,
                          timeout=300, check=False)


def environment(server_dir: Path, **extra: str) -> dict:
    env = {name: value for name, value in os.environ.items() if name != "EMU_NO_SERVER"}
    env.update(EMU_SERVER_DIR=str(server_dir), PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])), **extra)
    return env


class Server:
    """A `python -m emu serve` process for one test module (stopped with `serve --stop`)."""

    def __init__(self, folder: Path, env: dict, cwd: Path = ROOT):
        self.folder, self.env, self.cwd, self.log = folder, env, cwd, folder.parent / f"{folder.name}.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "emu", "serve"], cwd=cwd, env=env, stdout=log,
                                            stderr=subprocess.STDOUT)
        for _ in range(600):                         # until it answers (not a timing assertion: it fails only on a hang)
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited: {self.log.read_text()}")
            if emu(["serve", "--status"], env, cwd).returncode == 0:
                return
            time.sleep(0.1)
        self.process.kill()                          # leave no server behind
        self.process.wait()
        raise AssertionError(f"the server never answered: {self.log.read_text()}")

    def served(self) -> int:
        status = emu(["serve", "--status"], self.env, self.cwd).stdout.decode()
        return int(status.split(" command(s) served")[0].rsplit(" ", 1)[1])

    def stop(self) -> None:
        emu(["serve", "--stop"], self.env, self.cwd)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("server") / "emu"
    running = Server(folder, environment(folder))
    yield running
    running.stop()
    assert running.process.returncode == 0
    assert not (folder / "server.sock").exists()


def files(folder: Path) -> dict[str, bytes]:
    """The stores a command wrote, less those of the process rather than the command (the code of the classes it
    made and of the modules it imported, its source files' digests, its answers about the installed libraries:
    emu.cache.class_code, module_code, file_digests, answers), which a served command's warm server made before
    the command."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
            and p.relative_to(folder).parts[0] not in ("class_code", "module_code", "file_digests", "answers")}


def cold_and_served(server: Server, args: list[str], tmp_path: Path, cwd: Path = ROOT):
    results = []
    for mode in ("cold", "served"):
        store = tmp_path / f"store-{mode}"
        env = dict(server.env, EMU_CACHE_DIR=str(store), **({"EMU_NO_SERVER": "1"} if mode == "cold" else {}))
        before = server.served()
        result = emu(args, env, cwd)
        assert server.served() == before + (mode == "served"), f"{mode}: served count"
        results.append((result.returncode, result.stdout, result.stderr, files(store) if store.exists() else {}))
    return results


def scenario(tmp_path: Path) -> Path:
    path = tmp_path / "one.yaml"
    path.write_text(f"description: one object\nobjects: [{OBJECT}]\nentries: [cuda_init, cuda_load, cuda_load_to_device, launch]\n"
                    "expect:\n  calls_in_order:\n    - {symbol: _cudaLibraryLoadData, entry: cuda_init}\n")
    return path


COMMANDS = {
    "run": lambda t: ["run", str(scenario(t))],
    "run --json": lambda t: ["run", "--json", str(scenario(t))],
    "run, an upstream bug (exit 1)": lambda t: ["run", "scenarios/issue_3715_carveout.yaml"],
    "run, a missing file (exit 2)": lambda t: ["run", str(t / "missing.yaml")],
    "run, an invalid scenario (exit 2)": lambda t: ["run", str(_write(t / "bad.yaml", "objects: [x.o]\nbogus: 1\n"))],
    "trace": lambda t: ["trace", str(OBJECT)],
    "trace --json, aarch64": lambda t: ["trace", "--json", str(FIXTURES / "aarch64" / "carveout_25.o")],
    "trace, not an object (exit 2)": lambda t: ["trace", str(_write(t / "junk.o", "not an ELF file"))],
    "inspect": lambda t: ["inspect", str(OBJECT)],
    "inspect --json": lambda t: ["inspect", "--json", str(OBJECT)],
    "check DIR": lambda t: ["check", str(FIXTURES / "aarch64")],
    "check --json": lambda t: ["check", "--json", str(OBJECT), str(FIXTURES / "x86_64" / "plain.o")],
    "schema scenario": lambda t: ["schema", "scenario"],
    "no command (exit 2)": lambda t: [],
    "unknown command (exit 2)": lambda t: ["bogus"],
    "--help": lambda t: ["--help"],
}


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", COMMANDS)
def test_served_command_is_the_cold_command(server, tmp_path, name):
    cold, served = cold_and_served(server, COMMANDS[name](tmp_path), tmp_path)
    assert served[0] == cold[0]
    assert served[1] == cold[1]
    assert served[2] == cold[2]
    assert served[3] == cold[3]
    assert cold[1] or cold[2]                    # the comparison compared something


def test_served_command_runs_in_the_clients_folder(server, tmp_path):
    scenario(tmp_path)
    cold, served = cold_and_served(server, ["run", "--json", "one.yaml"], tmp_path, cwd=tmp_path)
    assert served == cold and cold[0] == 0


def test_piped_stdout_closed_early_exits_as_cold(server, tmp_path):
    """`emu ... | head -1`: the same bytes and the same exit status of the emu process."""
    codes = []
    for mode in ("cold", "served"):
        env = dict(server.env, **({"EMU_NO_SERVER": "1"} if mode == "cold" else {}))
        shell = f"{sys.executable} -m emu trace {OBJECT} | head -1; echo \"${{PIPESTATUS[0]}}\""
        result = subprocess.run(["bash", "-c", shell], cwd=ROOT, env=env, capture_output=True, timeout=300, check=False)
        codes.append((result.stdout, result.stderr))
    assert codes[0] == codes[1]


def test_a_server_of_other_sources_is_not_used(tmp_path):
    """A server started from a copy of emu serves that copy, never this one: the client runs the command itself."""
    copy = tmp_path / "copy"
    for package in ("emu", "stub_models"):
        shutil.copytree(ROOT / package, copy / package, ignore=shutil.ignore_patterns("__pycache__"))
    folder = tmp_path / "srv"
    theirs = Server(folder, dict(environment(folder), PYTHONPATH=str(copy)), cwd=copy)
    try:
        ours = environment(folder)
        assert emu(["serve", "--status"], ours).returncode == 1          # running, but not for these sources
        result = emu(["run", str(scenario(tmp_path))], ours)
        cold = emu(["run", str(scenario(tmp_path))], dict(ours, EMU_NO_SERVER="1"))
        assert (result.returncode, result.stdout, result.stderr) == (cold.returncode, cold.stdout, cold.stderr)
        assert theirs.served() == 0
    finally:
        theirs.stop()


def test_a_library_installed_after_the_server_started_is_not_served_stale(tmp_path):
    """A server imported the libraries of its module search path when it started: once one of those folders
    changes (pip installed, upgraded or removed something there), a fresh process could import other code,
    so the client runs the command itself."""
    libraries = tmp_path / "libraries"
    libraries.mkdir()
    folder = tmp_path / "srv"
    env = dict(environment(folder), PYTHONPATH=os.pathsep.join([str(ROOT), str(libraries)]))
    server = Server(folder, env)
    try:
        assert emu(["trace", str(OBJECT)], env).returncode == 0 and server.served() == 1
        (libraries / "somelib-2.0.dist-info").mkdir()                  # what an install leaves beside the library
        assert emu(["serve", "--status"], env).returncode == 1          # running, but not for this module search path
        result = emu(["trace", str(OBJECT)], env)
        cold = emu(["trace", str(OBJECT)], dict(env, EMU_NO_SERVER="1"))
        assert (result.returncode, result.stdout, result.stderr) == (cold.returncode, cold.stdout, cold.stderr)
        assert server.served() == 1
    finally:
        server.stop()


def test_a_client_with_other_interpreter_settings_runs_itself(server, tmp_path):
    before = server.served()
    env = dict(server.env, PYTHONHASHSEED="123")                     # read at start-up: a served child could not honour it
    result = emu(["trace", str(OBJECT)], env)
    cold = emu(["trace", str(OBJECT)], dict(env, EMU_NO_SERVER="1"))
    assert (result.returncode, result.stdout, result.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert emu(["trace", str(OBJECT)], server.env, python=[sys.executable, "-X", "utf8"]).stdout == cold.stdout
    assert server.served() == before


def test_a_dead_socket_is_ignored_and_replaced(tmp_path):
    folder = tmp_path / "srv"
    folder.mkdir(mode=0o700)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(folder / "server.sock"))                          # bound, never listening, closed: ECONNREFUSED
    dead.close()
    env = environment(folder)
    result = emu(["trace", str(OBJECT)], env)
    cold = emu(["trace", str(OBJECT)], dict(env, EMU_NO_SERVER="1"))
    assert (result.returncode, result.stdout, result.stderr) == (cold.returncode, cold.stdout, cold.stderr)
    assert emu(["serve", "--status"], env).returncode == 1
    server = Server(folder, env)                                     # a new server takes the stale socket's place
    try:
        assert emu(["trace", str(OBJECT)], env).stdout == cold.stdout
        assert server.served() == 1
    finally:
        server.stop()


def test_a_folder_other_users_can_reach_is_never_used(tmp_path):
    folder = tmp_path / "srv"
    folder.mkdir(mode=0o700)
    folder.chmod(0o755)
    env = environment(folder)
    refused = emu(["serve"], env)
    assert refused.returncode == 2
    assert b"can be reached by other users" in refused.stderr and b"Traceback" not in refused.stderr
    assert emu(["serve", "--status"], env).returncode == 1
    assert emu(["schema", "trace"], env).returncode == 0


def test_a_second_server_is_refused(server):
    second = emu(["serve"], server.env)
    assert second.returncode == 2 and b"already running" in second.stderr


def _children(pid: int) -> list[int]:
    """The server's child processes (Linux /proc): its spare, waiting, and the commands it runs."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.extend(int(child) for child in (task / "children").read_text().split())
    return found


def _session(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])


def _wait_for(condition, what: str):
    for _ in range(600):                             # not a timing assertion: it fails only on a hang
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"never happened: {what}")


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the server's children from Linux /proc")
def test_a_spare_killed_while_waiting_is_replaced(server, tmp_path):
    """The server forks each command's child before its request: killing that spare loses no request."""
    spares = _wait_for(lambda: [pid for pid in _children(server.process.pid) if _session(pid) != pid], "a spare child")
    for pid in spares:
        os.kill(pid, 9)
    cold, served = cold_and_served(server, ["trace", str(OBJECT)], tmp_path)
    assert served == cold and cold[0] == 0


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the server's children from Linux /proc")
@pytest.mark.parametrize("number", [15, 9])
def test_a_served_command_killed_by_a_signal_kills_its_client_alike(server, tmp_path, number):
    """A command's process killed by SIGTERM or SIGKILL: the client dies of that signal (143, 137 in a shell)."""
    fifo = tmp_path / "scenario.yaml"
    os.mkfifo(fifo)                                 # the command blocks opening it: a command still running
    before = server.served()
    client = subprocess.Popen([sys.executable, "-m", "emu", "run", str(fifo)], cwd=ROOT, env=server.env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        running = _wait_for(lambda: [pid for pid in _children(server.process.pid) if _session(pid) == pid], "the command's process")
        os.kill(running[0], number)
        out, err = client.communicate(timeout=60)
    finally:
        if client.poll() is None:
            client.kill()
            client.wait()
    assert client.returncode == -number and server.served() == before + 1
