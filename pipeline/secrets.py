"""Secrets never written: what goes to MLflow, bundles, cards and logs passes through `mask`.

A secret can sit in a URI (`https://user:pw@host`, `?token=…&password=…`), in the value of a known
flag (`--api-key X`, `--hf-token=X`), in an engine's `env` (every value: a name says nothing about
whether its value is private), or under a key that names one (`api_key`, `password`, `token` …).

    >>> mask_text("mlflow at https://bob:s3cr%3At@host:5000/?token=abc&x=1")
    'mlflow at https://bob:***@host:5000/?token=***&x=1'
    >>> mask_args(["--api-key", "k1", "--hf-token=k2", "--port", "8000"])
    ['--api-key', '***', '--hf-token=***', '--port', '8000']
"""

from __future__ import annotations

import functools
import re
from typing import Any

import yaml

MASK = "***"
# Keys (in params, settings, JSON) whose values are secrets, whatever the value looks like: by
# the words of the key (`hf_token`, `apiKey`, `db-password`), not substrings (`max_tokens`).
_SECRET_WORDS = {"password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "auth",
                 "credential", "credentials", "cookie", "bearer", "privatekey", "accesskey",
                 "sessionkey", "secretkey", "pat"}
_PAIRS = {("api", "key"), ("private", "key"), ("access", "key"), ("session", "key"),
          ("secret", "key"), ("client", "secret"), ("sas", "key")}
# Command-line flags whose next argument (or `=value`) is a secret.
SECRET_FLAGS = ("--api-key", "--hf-token", "--token", "--password", "--secret", "--auth",
                "--access-token", "--ssl-keyfile-password", "--api-token")
_USERINFO = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^\s:/@?#]*):(?P<pw>[^\s@/?#]*)@", re.I)
_QUERY = re.compile(r"(?P<key>[?&;](?:[^=&\s#]*?)(?:pass(?:word|wd)?|secret|token|api[_-]?key|apikey|"
                    r"key|auth|sig|signature|credential)[^=&\s#]*)=(?P<val>[^&\s#]*)", re.I)
_FLAG_EQ = re.compile(r"(?P<flag>(?:" + "|".join(map(re.escape, SECRET_FLAGS)) + r"))=(?P<val>\S+)")
_FLAG_SP = re.compile(r"(?P<flag>(?:" + "|".join(map(re.escape, SECRET_FLAGS)) + r"))\s+(?P<val>[^\s-]\S*)")
_BEARER = re.compile(r"(?i)(authorization:\s*bearer\s+|bearer\s+)([A-Za-z0-9._~+/=-]{8,})")


@functools.lru_cache(maxsize=4096)  # logs repeat a few keys millions of times
def secret_key(key: str) -> bool:
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", str(key))]
    return bool(set(words) & _SECRET_WORDS) or any(p in _PAIRS for p in zip(words, words[1:]))


# `key: value`, `key=value`, `'key': ['value']` (a repr or JSON), `KEY=value` (an env line).
_ASSIGN = re.compile(r"""(?P<k>['"]?[A-Za-z_][\w.-]*['"]?)(?P<sep>\s*[:=]\s*)"""
                     r"""(?P<v>\[\s*(?:'[^']*'|"[^"]*")|'[^']*'|"[^"]*"|[^\s,;}\]'"]+)""")


def _mask_assign(m: re.Match) -> str:
    if not secret_key(m["k"].strip("'\"")) or m["v"].strip("[ '\"") in ("", MASK, "None", "null"):
        return m.group(0)
    v = m["v"]
    quote = next((q for q in ("'", '"') if q in v), "")
    masked = (v[:v.index(quote) + 1] + MASK + quote) if quote else MASK
    return f"{m['k']}{m['sep']}{masked}"


def mask_text(text: str) -> str:
    """`text` with URI passwords (any scheme), secret query values, secret flag values and bearer
    tokens replaced by ***."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    text = _QUERY.sub(lambda m: f"{m['key']}={MASK}", text)
    text = _FLAG_EQ.sub(lambda m: f"{m['flag']}={MASK}", text)
    text = _FLAG_SP.sub(lambda m: f"{m['flag']} {MASK}", text)
    text = _BEARER.sub(lambda m: m.group(1) + MASK, text)
    return _ASSIGN.sub(_mask_assign, text)


def mask_args(args: list[str]) -> list[str]:
    """A command line with the values of secret flags masked (`--flag v` and `--flag=v`)."""
    out, hide = [], False
    for a in map(str, args):
        if hide:
            out.append(MASK)
            hide = False
            continue
        flag, eq, _ = a.partition("=")
        if flag in SECRET_FLAGS:
            if eq:
                out.append(f"{flag}={MASK}")
            else:
                out.append(a)
                hide = True
            continue
        out.append(mask_text(a))
    return out


def mask_tree(obj: Any, *, path: tuple[str, ...] = ()) -> Any:
    """A JSON-like tree with secrets masked: values under secret-looking keys, every value of an
    engine's `env` mapping, the values of secret flags in `extra_args`, and secrets inside any
    string (URI passwords, query tokens)."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if path and path[-1] == "env" and isinstance(v, (str, int, float)) and v is not None:
                out[k] = MASK  # every engine env value: its name does not say it is public
            elif secret_key(k) and isinstance(v, (str, int, float)) and v not in (None, "", False):
                out[k] = MASK
            else:
                out[k] = mask_tree(v, path=(*path, str(k)))
        return out
    if isinstance(obj, list):
        if path and path[-1] == "extra_args" and all(isinstance(a, (str, int, float)) for a in obj):
            return mask_args([str(a) for a in obj])
        return [mask_tree(v, path=path) for v in obj]
    if isinstance(obj, str):
        return mask_text(obj)
    return obj


def mask_yaml(text: str) -> str:
    """A YAML document (params.yaml) with every secret masked, as YAML again."""
    return yaml.safe_dump(mask_tree(yaml.safe_load(text)), sort_keys=False, allow_unicode=True)
