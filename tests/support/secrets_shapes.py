"""The shapes of the own corpus's fake secrets (tests/support/secrets_corpus.py): the values, made up at run
time from a seeded generator, and the places transcripts hold them. Every prefix is joined to a
random body, so no real or even static key-shaped string sits in this file."""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
LOWER_HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"


@dataclass(frozen=True)
class Secret:
    kind: str  # the type it is counted under
    value: str  # the sensitive part: must not survive redaction
    text: str  # the value in its context, as a transcript would hold it


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    body = "".join(rng.choice(alphabet) for _ in range(n))
    if n >= 8 and not any(c.isdigit() for c in body) and any(c.isdigit() for c in alphabet):
        body = body[:-1] + rng.choice(string.digits)  # real keys of this length hold a digit
    return body


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# -- values -------------------------------------------------------------------------------------------

def aws_access_key(rng: random.Random) -> str:
    return rng.choice(["AK" + "IA", "AS" + "IA"]) + rand(rng, UPPER, 16)


def aws_secret(rng: random.Random) -> str:
    return rand(rng, B64, 40)


def github_token(rng: random.Random) -> str:
    if rng.random() < 0.25:
        return "github" + "_pat_" + rand(rng, ALNUM, 22) + "_" + rand(rng, ALNUM, 59)
    return rng.choice(["gh" + "p", "gh" + "o", "gh" + "u", "gh" + "s"]) + "_" + rand(rng, ALNUM, 36)


def gitlab_token(rng: random.Random) -> str:
    return "gl" + "pat-" + rand(rng, ALNUM + "_-", 20)


def anthropic_key(rng: random.Random) -> str:
    return "sk-" + "ant-" + rng.choice(["api03", "admin01"]) + "-" + rand(rng, B64URL, 93) + "AA"


def openai_key(rng: random.Random) -> str:
    marker = "T3Blbk" + "FJ"
    if rng.random() < 0.5:
        return "sk-" + rand(rng, ALNUM, 20) + marker + rand(rng, ALNUM, 20)
    return "sk-" + "proj-" + rand(rng, B64URL, 74) + marker + rand(rng, B64URL, 74)


def slack_token(rng: random.Random) -> str:
    kind = rng.choice(["b", "p", "a"])
    return (f"xox{kind}-" + rand(rng, string.digits, 12) + "-" + rand(rng, string.digits, 13) + "-"
            + rand(rng, ALNUM, 24))


def slack_webhook(rng: random.Random) -> str:
    return ("https://hooks." + "slack.com/services/T" + rand(rng, UPPER, 8) + "/B" + rand(rng, UPPER, 8) + "/"
            + rand(rng, ALNUM, 24))


def google_api_key(rng: random.Random) -> str:
    return "AI" + "za" + rand(rng, B64URL, 35)


def stripe_key(rng: random.Random) -> str:
    return rng.choice(["sk", "rk"]) + "_live_" + rand(rng, ALNUM, 24)


def sendgrid_key(rng: random.Random) -> str:
    return "SG" + "." + rand(rng, B64URL, 22) + "." + rand(rng, B64URL, 43)


def npm_token(rng: random.Random) -> str:
    return "np" + "m_" + rand(rng, ALNUM, 36)


def pypi_token(rng: random.Random) -> str:
    return "pypi-" + "AgEIcHlwaS5vcmc" + rand(rng, B64URL, 80)


def twilio_key(rng: random.Random) -> str:
    return "S" + "K" + rand(rng, LOWER_HEX, 32)


def azure_key(rng: random.Random) -> str:
    return rand(rng, B64, 86) + "=="


def telegram_token(rng: random.Random) -> str:
    return rand(rng, string.digits, 9) + ":AA" + rand(rng, B64URL, 33)


def jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": rand(rng, string.digits, 10), "name": rand(rng, string.ascii_letters, 8),
                                  "iat": rng.randint(1_600_000_000, 1_800_000_000)}).encode())
    return f"{header}.{payload}.{_b64url(rng.randbytes(32))}"


def password(rng: random.Random) -> str:
    return rand(rng, ALNUM, rng.randint(10, 20)) + rng.choice("!#%^*~")


def pem_body(rng: random.Random, lines: int) -> list[str]:
    return [rand(rng, B64, 64) for _ in range(lines)] + [rand(rng, B64, rng.randint(8, 60)) + "=="]


# -- contexts -----------------------------------------------------------------------------------------

def _token_contexts(value: str, name: str) -> list[str]:
    """Where a token-shaped secret shows up in a session."""
    return [
        f"Here is the {name} for staging: {value} (rotate it after the demo).",
        f"[tool Bash] {{\"command\": \"curl -s -H 'X-Api-Key: {value}' https://api.example.com/v1/me\"}}",
        f"[tool result]\n{{\n  \"name\": \"ci\",\n  \"credential\": \"{value}\",\n  \"scopes\": [\"repo\"]\n}}",
        f"```python\nclient = Client(\"{value}\")\n```",
        f"config.yaml:\n  service:\n    endpoint: https://api.example.com\n    auth: {value}\n",
        f"I pasted it into the terminal:\n$ deploy --auth={value} --env=prod",
    ]


def in_contexts(kind: str, value: str, name: str) -> list[Secret]:
    return [Secret(kind, value, text) for text in _token_contexts(value, name)]


Maker = Callable[[random.Random], list[Secret]]


def _tokens(kind: str, make: Callable[[random.Random], str], name: str) -> Maker:
    return lambda rng: in_contexts(kind, make(rng), name)


def _aws_secret(rng: random.Random) -> list[Secret]:
    key = aws_access_key(rng)
    s1, s2, s3, s4 = (aws_secret(rng) for _ in range(4))
    return [
        Secret("aws_secret_access_key", s1, f"[default]\naws_access_key_id = {key}\naws_secret_access_key = {s1}\n"),
        Secret("aws_secret_access_key", s2, f"export AWS_SECRET_ACCESS_KEY={s2}"),
        Secret("aws_secret_access_key", s3,
               f'session = boto3.Session(aws_access_key_id="AKID", aws_secret_key="{s3}")'),
        Secret("aws_secret_access_key", s4, f'{{"AWS_SECRET_ACCESS_KEY": "{s4}", "region": "eu-west-1"}}'),
    ]


def _private_keys(rng: random.Random) -> list[Secret]:
    out = []
    for label in ("RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY"):
        body = pem_body(rng, rng.randint(4, 25))
        block = f"-----BEGIN {label}-----\n" + "\n".join(body) + f"\n-----END {label}-----"
        out.append(Secret("private_key", "\n".join(body[:2]), f"cat ~/.ssh/id:\n{block}\nthat is the key"))
        # inside JSON (a service account file): newlines escaped
        escaped = block.replace("\n", "\\n")
        out.append(Secret("private_key", body[1],
                          f'{{"type": "service_account", "private_key": "{escaped}\\n", "client_email": "x@y.iam"}}'))
    # cut off before its END line (a truncated tool output)
    body = pem_body(rng, 6)
    out.append(Secret("private_key", body[3], "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body[:5]) + "\n"))
    body = pem_body(rng, 6)
    putty = ("PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: imported\nPublic-Lines: 2\n"
             + "\n".join(body[:2]) + "\nPrivate-Lines: 3\n" + "\n".join(body[2:5]) + "\nPrivate-MAC: "
             + rand(rng, LOWER_HEX, 40))
    out.append(Secret("private_key", body[3], putty))
    return out


def _urls(rng: random.Random) -> list[Secret]:
    out = []
    for scheme, host in (("postgres", "db.internal:5432/app"), ("https", "git.example.com/org/repo.git"),
                         ("mongodb+srv", "cluster0.example.net/test"), ("redis", "cache:6379/0"),
                         ("amqp", "mq.example.com:5672/vhost")):
        pw = password(rng).replace("#", "x").replace("%", "x")
        out.append(Secret("password_in_url", pw, f"DATABASE_URL used by the app: {scheme}://admin:{pw}@{host}"))
    return out


def _env(rng: random.Random) -> list[Secret]:
    out = []
    for name in ("DB_PASSWORD", "STRIPE_WEBHOOK_SECRET", "SENTRY_AUTH_TOKEN", "OPENWEATHER_API_KEY",
                 "SMTP_PASS", "JWT_SIGNING_KEY", "REDIS_PASSWORD", "SLACK_BOT_TOKEN"):
        v1, v2, v3 = password(rng), rand(rng, ALNUM, 32), password(rng)
        out.append(Secret("env_assignment", v1, f"# .env\nNODE_ENV=production\n{name}={v1}\nPORT=8080\n"))
        out.append(Secret("env_assignment", v2, f"export {name}={v2}"))
        out.append(Secret("env_assignment", v3, f"docker run -e {name}='{v3}' -p 8080:8080 app:latest"))
    return out


def _assignments(rng: random.Random) -> list[Secret]:
    out = []
    for name in ("access_token", "refresh_token", "client_secret", "api_key", "github_token", "apiKey",
                 "password", "db_password", "secret_key", "webhook_secret"):
        v1, v2, v3, v4 = rand(rng, ALNUM, 24), rand(rng, ALNUM, 28), password(rng), rand(rng, ALNUM, 20)
        out.append(Secret("assignment", v1, f'{{"{name}": "{v1}", "expires_in": 3600}}'))
        out.append(Secret("assignment", v2, f'settings.{name} = "{v2}"'))
        out.append(Secret("assignment", v3, f"{name}: {v3}\n"))
        out.append(Secret("assignment", v4, f"const {name} = '{v4}';"))
        v5, v6 = rand(rng, ALNUM, 24), password(rng).replace("#", "x")
        out.append(Secret("assignment", v5, f"GET https://api.example.com/v1/items?page=2&{name}={v5}&limit=50"))
        out.append(Secret("assignment", v6, f"$ tool login --{name.replace('_', '-')}={v6} --verbose"))
    return out


def _bearer(rng: random.Random) -> list[Secret]:
    out = []
    for _ in range(4):
        v = rand(rng, ALNUM + "-._~", 40)
        out.append(Secret("bearer_token", v, f"curl -H 'Authorization: Bearer {v}' https://api.example.com/v2/users"))
    v = base64.b64encode(f"deploy:{password(rng)}".encode()).decode()
    out.append(Secret("bearer_token", v, f"Authorization: Basic {v}"))
    return out


def _private_tags(rng: random.Random) -> list[Secret]:
    out = []
    for _ in range(4):
        v = " ".join(rand(rng, string.ascii_lowercase, rng.randint(3, 9)) for _ in range(rng.randint(3, 12)))
        out.append(Secret("private", v, f"My notes: <private>{v}</private> and then the rest of the prompt."))
    v = rand(rng, string.ascii_lowercase, 12)
    out.append(Secret("private", v, f"Before\n<private>\nline one {v}\n</private>\nafter"))
    v = rand(rng, string.ascii_lowercase, 12)
    out.append(Secret("private", v, f"an unclosed tag <private>keeps {v} hidden to the end"))
    return out


def _azure(rng: random.Random) -> list[Secret]:
    v = azure_key(rng)
    return [Secret("azure_storage_key", v,
                   f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={v};EndpointSuffix=core.windows.net")]


def _npm(rng: random.Random) -> list[Secret]:
    v = npm_token(rng)
    npmrc = f"~/.npmrc:\n//registry.npmjs.org/:_authToken={v}\n"
    return [Secret("npm_token", v, npmrc), *in_contexts("npm_token", v, "npm token")]


def hex_of(rng: random.Random, n: int) -> str:
    return rand(rng, LOWER_HEX, n)


PLATFORM_TOKENS: dict[str, Callable[[random.Random], str]] = {
    "digitalocean_token": lambda rng: "do" + rng.choice("opr") + "_v1_" + hex_of(rng, 64),
    "shopify_token": lambda rng: "shp" + rng.choice(["at", "ss", "ca", "pa"]) + "_" + hex_of(rng, 32),
    "vault_token": lambda rng: "hv" + "s." + "CAES" + rand(rng, B64URL, 91),
    "doppler_token": lambda rng: "dp" + ".pt." + rand(rng, ALNUM, 43),
    "linear_api_key": lambda rng: "lin" + "_api_" + rand(rng, ALNUM, 40),
    "huggingface_token": lambda rng: "h" + "f_" + rand(rng, string.ascii_letters, 34),
    "databricks_token": lambda rng: "da" + "pi" + hex_of(rng, 32),
    "atlassian_token": lambda rng: "ATAT" + "T3" + rand(rng, B64URL, 186),
    "postman_api_key": lambda rng: "PM" + "AK-" + hex_of(rng, 24) + "-" + hex_of(rng, 34),
    "grafana_token": lambda rng: "gl" + "sa_" + rand(rng, ALNUM, 32) + "_" + hex_of(rng, 8),
    "sentry_token": lambda rng: "sntr" + "ys_" + rand(rng, B64, 60),
    "pulumi_token": lambda rng: "pu" + "l-" + hex_of(rng, 40),
    "terraform_token": lambda rng: rand(rng, ALNUM, 14) + ".atlas" + "v1." + rand(rng, B64URL, 64),
    "newrelic_key": lambda rng: "NR" + "AK-" + rand(rng, UPPER, 27),
    "supabase_token": lambda rng: "sb" + "p_" + hex_of(rng, 40),
    "groq_api_key": lambda rng: "gs" + "k_" + rand(rng, ALNUM, 52),
    "docker_token": lambda rng: "dckr" + "_pat_" + rand(rng, B64URL, 27),
    "tailscale_key": lambda rng: "tskey" + "-auth-" + rand(rng, ALNUM, 12) + "-" + rand(rng, ALNUM, 30),
    "age_secret_key": lambda rng: "AGE-SECRET" + "-KEY-1" + rand(rng, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "mailgun_key": lambda rng: "ke" + "y-" + hex_of(rng, 32),
}


def _platform(kind: str, make: Callable[[random.Random], str]) -> Maker:
    def maker(rng: random.Random) -> list[Secret]:
        value = make(rng)
        env = kind.upper()
        return [*in_contexts(kind, value, kind.replace("_", " ")),
                Secret(kind, value, f"export {env}={value}"),
                Secret(kind, value, f"{{\"{kind}\": \"{value}\"}}")]
    return maker


def _webhooks(rng: random.Random) -> list[Secret]:
    discord = ("https://discord" + ".com/api/webhooks/" + rand(rng, string.digits, 18) + "/"
               + rand(rng, B64URL, 68))
    teams = ("https://contoso.webhook" + ".office.com/webhookb2/" + hex_of(rng, 8) + "-" + hex_of(rng, 4) + "-"
             + hex_of(rng, 4) + "@" + hex_of(rng, 8) + "/IncomingWebhook/" + hex_of(rng, 32) + "/" + hex_of(rng, 8))
    return [
        Secret("webhook", discord, f"curl -X POST -d '{{\"content\":\"hi\"}}' {discord}"),
        Secret("webhook", discord, f"DISCORD_HOOK={discord}"),
        Secret("webhook", teams, f"Post the alert to {teams} when the build fails."),
        Secret("webhook", teams, f'{{"teams_url": "{teams}"}}'),
    ]


def _command_lines(rng: random.Random) -> list[Secret]:
    """Passwords as developers type them on command lines and in .netrc (the shapes of issue 19)."""
    pw = [password(rng).replace("!", "x") for _ in range(10)]
    twilio_sid, twilio_token = "A" + "C" + hex_of(rng, 32), hex_of(rng, 32)
    return [
        Secret("command_line", pw[0], f"curl -u admin:{pw[0]} https://jenkins.internal/api/json"),
        Secret("command_line", pw[1], f"curl --user 'deploy:{pw[1]}' -X POST https://api.example.com/v1/hooks"),
        Secret("command_line", pw[2], f"sshpass -p '{pw[2]}' ssh root@10.0.0.5 uptime"),
        Secret("command_line", pw[3], f"mysql -h db.internal -u root -p{pw[3]} app < dump.sql"),
        Secret("command_line", pw[4], f"PGPASSWORD={pw[4]} psql -h db -U app -c 'select 1'"),
        Secret("command_line", pw[5], f"mongosh --host db --username admin --password {pw[5]}"),
        Secret("command_line", pw[6], f"docker login -u ci -p {pw[6]} registry.example.com"),
        Secret("command_line", pw[7],
               f"cat ~/.netrc\nmachine api.heroku.com\n  login me@example.com\n  password {pw[7]}\n"),
        Secret("command_line", pw[8], f"machine github.com login bot password {pw[8]}"),
        Secret("command_line", pw[9], f"redis-cli -u redis://:{pw[9]}@cache.internal:6379/0 ping"),
        Secret("command_line", twilio_token,
               f"client = twilio.rest.Client('{twilio_sid}', '{twilio_token}')"),
    ]


SHAPES: dict[str, Maker] = {
    "aws_access_key": _tokens("aws_access_key", aws_access_key, "AWS key id"),
    "aws_secret_access_key": _aws_secret,
    "github_token": _tokens("github_token", github_token, "GitHub token"),
    "gitlab_token": _tokens("gitlab_token", gitlab_token, "GitLab token"),
    "anthropic_api_key": _tokens("anthropic_api_key", anthropic_key, "Anthropic key"),
    "openai_api_key": _tokens("openai_api_key", openai_key, "OpenAI key"),
    "slack_token": _tokens("slack_token", slack_token, "Slack bot token"),
    "slack_webhook": _tokens("slack_webhook", slack_webhook, "Slack webhook"),
    "google_api_key": _tokens("google_api_key", google_api_key, "Maps key"),
    "stripe_key": _tokens("stripe_key", stripe_key, "Stripe key"),
    "sendgrid_key": _tokens("sendgrid_key", sendgrid_key, "SendGrid key"),
    "pypi_token": _tokens("pypi_token", pypi_token, "PyPI token"),
    "twilio_key": _tokens("twilio_key", twilio_key, "Twilio key"),
    "telegram_token": _tokens("telegram_token", telegram_token, "bot token"),
    "jwt": _tokens("jwt", jwt, "session token"),
    "npm_token": _npm,
    "azure_storage_key": _azure,
    "private_key": _private_keys,
    "password_in_url": _urls,
    "env_assignment": _env,
    "assignment": _assignments,
    "bearer_token": _bearer,
    "private": _private_tags,
    **{kind: _platform(kind, make) for kind, make in PLATFORM_TOKENS.items()},
    "webhook": _webhooks,
    "command_line": _command_lines,
}
