"""Reads the runtime (last) stage of a Dockerfile and carries it out on a root filesystem through chroot.

Used by scripts/check-image, which has no Docker engine: the stage's instructions run on a debootstrap root
filesystem exactly as written, so the check cannot drift from the Dockerfile. Only the instructions the Isthmus
Dockerfile uses are understood; any other one is an error rather than silently skipped.
"""
import json
import os
import re
import shlex
import subprocess

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
KNOWN = {"FROM", "ARG", "LABEL", "SHELL", "RUN", "ENV", "COPY", "USER", "WORKDIR", "VOLUME", "EXPOSE",
         "HEALTHCHECK", "ENTRYPOINT", "CMD"}


class DockerfileError(Exception):
    """The Dockerfile says something this reader does not understand (with the line)."""


class Instruction:
    def __init__(self, keyword, arguments, line):
        self.keyword = keyword
        self.arguments = arguments
        self.line = line

    def __repr__(self):
        return f"{self.keyword} {self.arguments} (line {self.line})"


def instructions(text):
    """The instructions of a Dockerfile: comments dropped (also inside continued lines), continuations joined."""
    result, pending, start = [], "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        stripped = raw.strip()
        if stripped.startswith("#") or (not stripped and not pending):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        pending += stripped
        keyword, _, arguments = pending.partition(" ")
        result.append(Instruction(keyword.upper(), arguments.strip(), start))
        pending = ""
    if pending:
        raise DockerfileError(f"line {start}: the file ends inside a continued line")
    return result


def split_flags(arguments):
    """`--a=b --c=d rest…` → ({a: [b], c: [d]}, rest)."""
    flags = {}
    while arguments.startswith("--"):
        flag, _, arguments = arguments.partition(" ")
        name, _, value = flag[2:].partition("=")
        flags.setdefault(name, []).append(value)
        arguments = arguments.lstrip()
    return flags, arguments


def command_form(arguments, shell):
    """Exec form (JSON array) as is; shell form wrapped in the stage's SHELL."""
    if arguments.startswith("["):
        try:
            return json.loads(arguments)
        except json.JSONDecodeError as error:
            raise DockerfileError(f"not a JSON array: {arguments} ({error})")
    return shell + [arguments]


def substitute(text, variables):
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: variables.get(m.group(1) or m.group(2), ""), text)


class RuntimeStage:
    """The last stage of a Dockerfile, split into the part that installs packages (before the first COPY, cached by
    scripts/check-image) and the rest."""

    def __init__(self, path, context):
        self.path = path
        self.context = context
        every = instructions(open(path, encoding="utf-8").read())
        global_args = {}
        stages = []
        for instruction in every:
            if instruction.keyword == "FROM":
                stages.append([instruction])
            elif not stages and instruction.keyword == "ARG":
                name, _, default = instruction.arguments.partition("=")
                global_args[name] = default.strip('"')
            elif stages:
                stages[-1].append(instruction)
            else:
                raise DockerfileError(f"line {instruction.line}: {instruction.keyword} before the first FROM")
        if not stages:
            raise DockerfileError("no FROM")
        stage = stages[-1]
        words = substitute(stage[0].arguments, global_args).split()
        self.base_image = words[0]
        self.name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
        self.body = stage[1:]
        for instruction in self.body:
            if instruction.keyword not in KNOWN:
                raise DockerfileError(f"line {instruction.line}: check-image does not understand {instruction.keyword}")
        first_copy = next((i for i, ins in enumerate(self.body) if ins.keyword == "COPY"), len(self.body))
        self.setup = self.body[:first_copy]
        self.rest = self.body[first_copy:]

    def mounted_files(self, instructions_):
        """Context files that RUN --mount=type=bind brings in (their content belongs in a cache key)."""
        files = []
        for instruction in instructions_:
            if instruction.keyword == "RUN":
                flags, _ = split_flags(instruction.arguments)
                for mount in flags.get("mount", []):
                    options = dict(part.split("=", 1) for part in mount.split(","))
                    files.append(options.get("source"))
        return files


class ImageConfig:
    """What the stage leaves behind for `docker run`: user, working directory, environment, command, health check."""

    def __init__(self):
        self.user = "0:0"
        self.workdir = "/"
        self.env = {"PATH": DEFAULT_PATH}
        self.shell = ["/bin/sh", "-c"]
        self.entrypoint = []
        self.cmd = []
        self.healthcheck = None
        self.exposed = []
        self.volumes = []
        self.args = {}

    def to_json(self):
        return {key: value for key, value in vars(self).items()}

    @classmethod
    def from_json(cls, data):
        config = cls()
        for key, value in data.items():
            setattr(config, key, value)
        return config


class Chroot:
    """Runs commands in a root filesystem as a given user, with a clean environment (like `docker run`)."""

    def __init__(self, root, privileged_prefix):
        self.root = root
        self.prefix = privileged_prefix

    def numeric_user(self, user):
        name, _, group = user.partition(":")
        passwd = self._table("etc/passwd")
        groups = self._table("etc/group")
        uid = name if name.isdigit() else passwd.get(name, [None, None, None])[2]
        if uid is None:
            raise DockerfileError(f"USER {user}: no such user in the image")
        if group:
            gid = group if group.isdigit() else groups.get(group, [None, None, None])[2]
        else:
            gid = next((row[3] for row in passwd.values() if row[2] == uid), uid)
        return f"{uid}:{gid}"

    def home(self, uid):
        row = next((row for row in self._table("etc/passwd").values() if row[2] == uid), None)
        return row[5] if row else "/"

    def _table(self, relative):
        rows = {}
        path = os.path.join(self.root, relative)
        if os.path.exists(path):
            for line in open(path, encoding="utf-8"):
                fields = line.rstrip("\n").split(":")
                rows[fields[0]] = fields
        return rows

    def argv(self, command, user="0:0", workdir="/", env=None):
        numeric = self.numeric_user(user)
        environment = {"HOME": self.home(numeric.split(":")[0]), "PATH": DEFAULT_PATH}
        environment.update(env or {})
        assignments = [f"{key}={value}" for key, value in environment.items()]
        return self.prefix + ["chroot", f"--userspec={numeric}", self.root,
                              "/usr/bin/env", "-i", "-C", workdir] + assignments + list(command)

    def run(self, command, user="0:0", workdir="/", env=None, **options):
        return subprocess.run(self.argv(command, user, workdir, env), **options)


def apply(stage_instructions, chroot, context, config, copy_sources=None, file_overrides=None, log=print):
    """Carries out `stage_instructions` in `chroot`, updating `config`. Does I/O (runs commands as root in the chroot).

    - copy_sources: {"build:/out/isthmus": host path} for COPY --from=STAGE.
    - file_overrides: {context-relative path: host path} to bring in another file in place of a context file
      (scripts/check-image --drop-package uses it for the package list).
    """
    copy_sources = copy_sources or {}
    file_overrides = file_overrides or {}
    root = chroot.root

    def host_path(source):
        return file_overrides.get(source, os.path.join(context, source))

    def privileged(command):
        subprocess.run(chroot.prefix + command, check=True)

    for instruction in stage_instructions:
        keyword, arguments = instruction.keyword, substitute(instruction.arguments, config.args) \
            if instruction.keyword not in ("RUN", "CMD", "ENTRYPOINT", "HEALTHCHECK") else instruction.arguments
        if keyword in ("LABEL", "EXPOSE", "VOLUME"):
            if keyword == "EXPOSE":
                config.exposed += arguments.split()
            elif keyword == "VOLUME":
                config.volumes += command_form(arguments, []) if arguments.startswith("[") else arguments.split()
        elif keyword == "ARG":
            name, _, default = arguments.partition("=")
            config.args[name] = default.strip('"')
        elif keyword == "SHELL":
            config.shell = command_form(arguments, [])
        elif keyword == "ENV":
            words = shlex.split(arguments)
            if words and "=" not in words[0]:
                config.env[words[0]] = " ".join(words[1:])
            else:
                for word in words:
                    key, _, value = word.partition("=")
                    config.env[key] = substitute(value, config.env)
        elif keyword == "WORKDIR":
            config.workdir = os.path.join(config.workdir, arguments)
            privileged(["mkdir", "-p", os.path.join(root, config.workdir.lstrip("/"))])
        elif keyword == "USER":
            config.user = arguments
        elif keyword == "RUN":
            flags, command = split_flags(arguments)
            placed = []
            for mount in flags.get("mount", []):
                options = dict(part.split("=", 1) for part in mount.split(","))
                if options.get("type") != "bind":
                    raise DockerfileError(f"line {instruction.line}: only --mount=type=bind is understood")
                target = os.path.join(root, options["target"].lstrip("/"))
                privileged(["cp", host_path(options["source"]), target])
                placed.append(target)
            log(f"  RUN (line {instruction.line}) {command[:100]}{'…' if len(command) > 100 else ''}")
            env = dict(config.env)
            env.update(config.args)
            try:
                result = chroot.run(command_form(command, config.shell), user=config.user, workdir=config.workdir,
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            finally:
                for target in placed:
                    privileged(["rm", "-f", target])
            if result.returncode != 0:
                raise DockerfileError(f"line {instruction.line}: RUN failed (exit {result.returncode}):\n"
                                      + result.stdout[-4000:])
        elif keyword == "COPY":
            flags, rest = split_flags(arguments)
            words = command_form(rest, []) if rest.startswith("[") else rest.split()
            sources, destination = words[:-1], words[-1]
            for source in sources:
                if "from" in flags:
                    key = f"{flags['from'][0]}:{source}"
                    if key not in copy_sources:
                        raise DockerfileError(f"line {instruction.line}: COPY --from: no file given for {key}")
                    origin = copy_sources[key]
                else:
                    origin = host_path(source)
                target = os.path.join(root, destination.lstrip("/"))
                if destination.endswith("/"):
                    target = os.path.join(target, os.path.basename(source))
                # Like Docker: the source's mode unless --chmod says otherwise.
                mode = flags["chmod"][0] if "chmod" in flags else format(os.stat(origin).st_mode & 0o7777, "o")
                privileged(["install", "-D", "-m", mode, origin, target])
                if "chown" in flags:
                    privileged(["chown", chroot.numeric_user(flags["chown"][0]), target])
            log(f"  COPY (line {instruction.line}) {' '.join(sources)} → {destination}")
        elif keyword == "HEALTHCHECK":
            flags, rest = split_flags(arguments)
            if rest.upper() == "NONE":
                config.healthcheck = None
            else:
                if not rest.upper().startswith("CMD"):
                    raise DockerfileError(f"line {instruction.line}: HEALTHCHECK without CMD")
                config.healthcheck = {"test": command_form(rest[3:].strip(), config.shell),
                                      "options": {k: v[0] for k, v in flags.items()}}
        elif keyword == "ENTRYPOINT":
            config.entrypoint = command_form(arguments, config.shell)
            config.cmd = []
        elif keyword == "CMD":
            config.cmd = command_form(arguments, config.shell)
    return config

