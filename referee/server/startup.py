"""Checks of a ServerConfig made before the referee touches anything: the ports can be bound, the
Unix socket path, the TLS files and the data directory are usable. Each failure is a
StartupError whose message names the flag and its value (``referee serve`` prints it as one line
and exits 2). They run before the data directory is created, so a bad flag leaves nothing behind.

A check can pass and the real bind still fail (another process takes the port in between): the
server raises StartupError then too, with the same words."""
from __future__ import annotations

import errno
import os
import socket
import ssl
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

if TYPE_CHECKING:
    from referee.server.config import ServerConfig

UNIX_PATH_MAX = 107  # sun_path holds 108 bytes with the final NUL


class StartupError(Exception):
    """The referee cannot start with this configuration; the message says why, naming the flag."""


def check_config(cfg: ServerConfig) -> None:
    """Raise StartupError for the first unusable setting, without creating or changing anything
    (the ports are bound for a moment and released)."""
    check_tls(cfg.tls_cert, cfg.tls_key)
    check_data_dir(cfg.data_dir)
    if cfg.http_port and cfg.http_port == cfg.port:
        raise StartupError(f"--http-port {cfg.http_port} is also the gRPC --port: give the web "
                           "viewer another port (or 0 for any free one)")
    check_port(cfg.host, cfg.port, "--port")
    if cfg.http_port is not None:
        check_port(cfg.web_host or cfg.host, cfg.http_port, "--http-port")
    if cfg.unix_socket:
        check_unix_socket(cfg.unix_socket)
    if cfg.port_file:
        check_port_file(cfg.port_file, cfg.data_dir)
    if cfg.house_bots and cfg.tls_cert and not cfg.unix_socket:
        # they connect to this referee in plain text: over its Unix socket, never its TLS port
        raise StartupError("--house-bots with --tls-cert needs --unix PATH: the house bots "
                           "connect to the referee over its Unix socket")
    if cfg.house_bots and not 1 <= cfg.house_capacity <= 256:
        raise StartupError(f"--house-capacity is 1 to 256, not {cfg.house_capacity}")


def _strip(host: str) -> str:
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def bind_failure(host: str, port: int, flag: str, err: int | None, detail: str = "") -> str:
    """The message for a port that cannot be bound, by errno (None: unknown)."""
    if err == errno.EADDRINUSE:
        who = "another referee? " if flag == "--port" else ""
        return (f"{flag} {port} on {host} is in use ({who}pick another with {flag}, or {flag} 0 "
                "for any free port)")
    if err == errno.EACCES:
        why = " (ports below 1024 need privileges)" if 0 < port < 1024 else ""
        return f"{flag} {port} on {host}: permission denied{why}"
    if err == errno.EADDRNOTAVAIL:
        return f"--host {host} is not an address of this machine ({flag} {port} cannot be bound)"
    return f"{flag} {port} on {host} cannot be bound" + (f": {detail}" if detail else "")


def check_port(host: str, port: int, flag: str) -> None:
    """Bind (host, port) as the server will (SO_REUSEADDR, so a port held only by connections in
    TIME_WAIT from a previous run passes) on each address the host resolves to; fail if none
    can be bound, as gRPC does."""
    name = _strip(host)
    try:
        infos = socket.getaddrinfo(name or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartupError(f"--host {host} cannot be resolved: {exc.strerror}") from None
    first: OSError | None = None
    for family, kind, proto, _, addr in infos:
        try:
            with socket.socket(family, kind, proto) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(addr)
                return
        except OSError as exc:
            first = first or exc
    if first is not None:
        raise StartupError(bind_failure(host, port, flag, first.errno, first.strerror or ""))


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def check_data_dir(data_dir: str) -> None:
    flag = f"--data-dir {data_dir}"
    path = Path(data_dir)
    if path.exists():
        if not path.is_dir():
            raise StartupError(f"{flag} is a file, not a directory")
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o022:
            # another user could swap the store, the keys or an archive under the referee
            raise StartupError(f"{flag} is writable by {_who(mode)} (mode {mode:04o}): the "
                               f"referee keeps seeds and keys there; make it private (chmod "
                               f"700 {data_dir}) or use another directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise StartupError(f"{flag} is not writable")
        db = path / "referee.sqlite3"
        if db.exists() and (not db.is_file() or not os.access(db, os.R_OK | os.W_OK)):
            raise StartupError(f"{flag}: its store {db} cannot be read and written")
        return
    parent = _nearest_existing(path.absolute().parent)
    if not parent.is_dir():
        raise StartupError(f"{flag} cannot be created: {parent} is a file, not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise StartupError(f"{flag} cannot be created: {parent} is not writable")


def _who(mode: int) -> str:
    return " and ".join(w for w, bit in (("its group", 0o020), ("others", 0o002)) if mode & bit)


#: umask of ``referee serve``: whatever it writes (the store and its -wal/-shm files, records,
#: archives, logs, keys) is its user's alone, including files a library creates
PRIVATE_UMASK = 0o077


def make_private(data_dir: str | Path) -> list[str]:
    """Create the data directory 0700, or tighten an existing one: the directory to 0700 and
    each file (0600) and folder (0700) directly in it that its group or others could read (a
    data directory from before issue 31, item 6: the store holds every running match's seed).
    Sockets and links are left alone. What was tightened is logged (a warning) and returned."""
    path = Path(data_dir)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    tightened = []
    for entry in [path, *path.iterdir()]:
        st = entry.lstat()
        if stat.S_ISDIR(st.st_mode):
            want = 0o700
        elif stat.S_ISREG(st.st_mode):
            want = 0o600
        else:
            continue
        if st.st_mode & 0o077:
            os.chmod(entry, stat.S_IMODE(st.st_mode) & want)
            tightened.append(f"{entry} ({stat.S_IMODE(st.st_mode):04o})")
    if tightened:
        structlog.get_logger("referee.server").warning(
            "data_dir_tightened", paths=tightened,
            note="group or others could read these; now only this user can")
    return tightened


def check_unix_socket(path: str) -> None:
    flag = f"--unix {path}"
    if len(os.fsencode(path)) > UNIX_PATH_MAX:
        raise StartupError(f"{flag}: the path is longer than {UNIX_PATH_MAX} bytes (use a "
                           "shorter one, e.g. under /tmp)")
    sock = Path(path)
    folder = sock.absolute().parent
    if not folder.is_dir():
        raise StartupError(f"{flag}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StartupError(f"{flag}: the folder {folder} is not writable")
    if not (sock.exists() or sock.is_symlink()):
        return
    mode = sock.lstat().st_mode
    if stat.S_ISDIR(mode):
        raise StartupError(f"{flag} is a directory, not a socket")
    if not stat.S_ISSOCK(mode):
        raise StartupError(f"{flag}: a file that is not a socket is there (remove it or pick "
                           "another path)")
    # A socket left by a previous run is replaced at start; one still answered is not.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        try:
            s.connect(path)
        except OSError:
            return
    raise StartupError(f"{flag} is in use: a process listens there (another referee?)")


def check_port_file(path: str, data_dir: str) -> None:
    flag = f"--port-file {path}"
    target = Path(path)
    folder = target.absolute().parent
    if target.is_dir():
        raise StartupError(f"{flag} is a directory")
    if folder == Path(data_dir).absolute() and not folder.exists():
        return  # created at start, as the data directory (checked above)
    if not folder.is_dir():
        raise StartupError(f"{flag}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StartupError(f"{flag}: the folder {folder} is not writable")


def _readable(path: str, flag: str) -> None:
    try:
        with open(path, "rb") as f:
            f.read(1)
    except FileNotFoundError:
        raise StartupError(f"{flag} {path}: no such file") from None
    except IsADirectoryError:
        raise StartupError(f"{flag} {path} is a directory, not a PEM file") from None
    except OSError as exc:
        raise StartupError(f"{flag} {path} cannot be read: {exc.strerror}") from None


def check_tls(cert: str | None, key: str | None) -> None:
    if not cert and not key:
        return
    if not key:
        raise StartupError(f"--tls-cert {cert} needs --tls-key (the certificate's private key)")
    if not cert:
        raise StartupError(f"--tls-key {key} needs --tls-cert (the certificate chain)")
    _readable(cert, "--tls-cert")
    _readable(key, "--tls-key")
    try:
        # load_cert_chain parses both PEM files and checks the key matches the certificate; an
        # empty password makes an encrypted key fail here instead of prompting (gRPC cannot
        # use one either).
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key, password=b"")
    except ssl.SSLError as exc:
        raise StartupError(f"--tls-cert {cert} / --tls-key {key}: not a usable PEM certificate "
                           f"and matching unencrypted private key ({exc.reason or exc})") from None
