"""The verify worker: run by the interpreter of the target's environment (`--python`), with the
standard library only (vmine itself is not installed there). It reads JSON requests, one a
line, on stdin and writes one JSON answer a line on stdout; what the target's code prints
goes to stderr.

Requests:
- `{"op": "survey", "files": [...], "distribution": NAME|null}`: where each dataset file path
  is installed (the longest suffix of it found under an entry of sys.path) and its module,
  and the installed version of the distribution.
- `{"op": "run", "module": M, "code": C, "timeout": S, "memory": BYTES}`: M is imported here
  once (so that the runs share it), then C runs in a forked child under a time limit and an
  address-space cap (`memory` bytes more than the imports mapped), in a fresh namespace; the answer says how it ended: `raised` (the class,
  its base classes' names, the message, the innermost frame's file and line, and every
  frame's), `no-raise`, `not-importable` (the missing module), `timeout` or `crashed`.

The network is refused inside this process and its children (an audit hook), whatever the
target's code does, and a run may start no process; each run is a process group of its own,
killed when it ends. The caller also sets HF_HUB_OFFLINE, TRANSFORMERS_OFFLINE and no
proxies, and starts this process in a session of its own, killed when verify ends.
"""

import json
import os
import resource
import select
import signal
import sys
import traceback

MESSAGE_LIMIT = 4000


_NETWORK = ("socket.connect", "socket.bind", "socket.getaddrinfo", "socket.sendto")
# What a run may not start: a validator has no need of new processes, and the target's own
# (a compiler probe, a GPU query) outlive the run.
_PROCESSES = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork")
_in_run = False


def _refuse(event, args):
    # Every connection, name lookup and listening socket goes through one of these events.
    if event in _NETWORK:
        raise PermissionError(f"vmine verify: the network is blocked ({event})")
    if _in_run and event in _PROCESSES:
        raise PermissionError(f"vmine verify: no new processes in a run ({event})")


def survey(files, distribution):
    roots = [entry for entry in sys.path if entry and os.path.isdir(entry)]
    found = {}
    for path in files:
        parts = path.split("/")
        found[path] = None
        for start in range(len(parts)):
            tail = parts[start:]
            for root in roots:
                candidate = os.path.join(root, *tail)
                if os.path.isfile(candidate):
                    names = tail[:-1] if tail[-1] == "__init__.py" else [*tail[:-1], tail[-1][:-3]]
                    found[path] = {"path": candidate, "module": ".".join(names)}
                    break
            if found[path] is not None:
                break
    version = None
    if distribution:
        try:
            from importlib.metadata import version as installed_version

            version = installed_version(distribution)
        except Exception:
            version = None
    return {"files": found, "version": version, "python": sys.version.split()[0]}


# Stand-ins for the modules a target imports that are not installed here (an optional
# dependency, a wheel removed for not matching the CPU torch): every name in them is a
# stand-in class, one that can be subclassed, called, used as a decorator or annotation.
# A reproducer that needed them starts with this text and `absent(["name", ...])`.
ABSENT = """import importlib.util, sys, types
class _AbsentType(type):
    def __getattr__(cls, name):
        if name.startswith("__"): raise AttributeError(name)
        return _absent_class(cls.__name__ + "." + name)
    def __call__(cls, *args, **kwargs):
        if cls.__dict__.get("_vmine_absent") and len(args) == 1 and not kwargs and callable(args[0]):
            return args[0]  # a decorator
        return super().__call__(*args, **kwargs)
def _absent_call(self, *args, **kwargs):
    if len(args) == 1 and not kwargs and callable(args[0]):
        return args[0]  # a decorator made by a call: `@codec.register("x")`
    return self
def _absent_attribute(self, name):
    if name.startswith("__"): raise AttributeError(name)
    return _absent_class(type(self).__name__ + "." + name)()
def _absent_class(name):
    return _AbsentType(name.rsplit(".", 1)[-1], (), {"_vmine_absent": True,
        "__init__": lambda self, *args, **kwargs: None, "__call__": _absent_call,
        "__getattr__": _absent_attribute, "__module__": name.rsplit(".", 1)[0]})
class _Absent(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"): raise AttributeError(name)
        made = _absent_class(self.__name__ + "." + name)
        setattr(self, name, made)
        return made
class _AbsentFinder:
    def __init__(self, roots): self.roots = set(roots)
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in self.roots:
            return importlib.util.spec_from_loader(name, self, is_package=True)
    def create_module(self, spec): return _Absent(spec.name)
    def exec_module(self, module): module.__path__ = []
def absent(roots):
    \"\"\"The modules `roots` (not installed here) as stand-ins.\"\"\"
    sys.meta_path.insert(0, _AbsentFinder(roots))
"""
exec(ABSENT)  # noqa: S102 - this module's own text: the worker installs stand-ins with it

_imported = {}
_absent = []  # the modules made stand-ins in this worker, in order
MAX_ABSENT = 8


def _import(module):
    """None when `module` imports (once), else the answer that says why not. A module it
    imports that is not installed (another distribution's) is made a stand-in, and the
    import tried again."""
    while module not in _imported:
        try:
            with _time_limit(120):
                __import__(module)
            _imported[module] = None
        except BaseException as error:  # the target's import may raise anything
            missing = getattr(error, "name", None) if isinstance(error, ImportError) else None
            root = (missing or "").split(".")[0]
            if (
                isinstance(error, ModuleNotFoundError)
                and root
                and root != module.split(".")[0]
                and root not in _absent
                and len(_absent) < MAX_ABSENT
            ):
                _absent.append(root)
                absent([root])  # noqa: F821 - defined by ABSENT
                continue
            _imported[module] = {
                "outcome": "not-importable",
                "missing": missing,
                "message": f"{type(error).__name__}: {_text(error)}"[:MESSAGE_LIMIT],
            }
    return _imported[module]


class _TimeLimit(BaseException):
    pass


class _time_limit:
    def __init__(self, seconds):
        self.seconds = seconds

    def _ring(self, signum, frame):
        raise _TimeLimit()

    def __enter__(self):
        self.before = signal.signal(signal.SIGALRM, self._ring)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __exit__(self, *exc):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self.before)
        return False


def _text(error):
    try:
        return str(error)
    except BaseException:
        return "<unprintable>"


def _mapped():
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _ran(code, timeout):
    """What running `code` did, as an answer (in the forked child)."""
    namespace = {"__name__": "__vmine_reproducer__"}
    try:
        with _time_limit(timeout):
            exec(compile(code, "<reproducer>", "exec"), namespace)
    except _TimeLimit:
        return {"outcome": "timeout"}
    except BaseException as error:
        frames = [
            (frame.filename, frame.lineno) for frame in traceback.extract_tb(error.__traceback__)
        ]
        return {
            "outcome": "raised",
            "class": type(error).__name__,
            "bases": [klass.__name__ for klass in type(error).__mro__],
            "message": _text(error)[:MESSAGE_LIMIT],
            "file": frames[-1][0] if frames else None,
            "line": frames[-1][1] if frames else None,
            "frames": frames[-12:],
        }
    return {"outcome": "no-raise"}


def _with_absent(answer):
    """The answer, with the modules this worker made stand-ins (a reproducer needs them)."""
    if _absent and isinstance(answer, dict):
        answer["absent"] = list(_absent)
    return answer


def run(module, code, timeout, memory):
    refused = _import(module) if module else None
    if refused is not None:
        return refused
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:
        global _in_run
        _in_run = True
        os.setpgid(0, 0)  # its own group: whatever it leaves behind is killed with it
        os.close(read_end)
        try:
            if memory:
                # On top of what the imports already mapped (torch maps gigabytes).
                limit = _mapped() + memory
                resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            answer = _ran(code, timeout)
        except BaseException as error:  # MemoryError while reporting, and the like
            answer = {"outcome": "crashed", "message": _text(error)[:200]}
        try:
            data = json.dumps(answer).encode()
        except (TypeError, ValueError):
            data = json.dumps({"outcome": "crashed", "message": "unreportable answer"}).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view) :]
        os._exit(0)
    os.close(write_end)
    chunks, deadline_left = [], timeout + 5.0
    while True:
        ready, _, _ = select.select([read_end], [], [], deadline_left)
        if not ready:
            _kill_group(child)
            os.waitpid(child, 0)
            os.close(read_end)
            return {"outcome": "timeout"}
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    _, status = os.waitpid(child, 0)
    _kill_group(child)
    if not chunks:
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "no answer"
        return {"outcome": "crashed", "message": how}
    return json.loads(b"".join(chunks))


def _kill_group(group):
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:  # nothing left of it
        pass


def main():
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the target's prints must not reach the answers
    sys.addaudithook(_refuse)
    for line in sys.stdin:
        request = json.loads(line)
        if request["op"] == "survey":
            answer = survey(request["files"], request.get("distribution"))
        else:
            answer = _with_absent(
                run(
                    request.get("module"),
                    request["code"],
                    request["timeout"],
                    request.get("memory"),
                )
            )
        answers.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    main()
