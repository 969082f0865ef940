"""The shared rate budget on a Redis Cluster (``redis+cluster://``) and behind Redis
Sentinel (``redis+sentinel://``): real servers started by tests/redis/topology.sh, once
for this module (a 3-primary cluster without replicas, a primary with a replica and 3
sentinels, all with a password), stopped at the end whatever happens. A call through
each counts in Redis; the password (the data nodes' and ``sentinel_password=``) is shown
nowhere, not even when the cluster is down; a malformed URL is a configuration error."""

from __future__ import annotations

import os
import shutil
import subprocess
import traceback
from typing import Iterator, List, Tuple

import pytest

import roomchat
from conftest import REPO, Emulator

PASSWORD = "py-topology-password-31"
TOPOLOGY = REPO / "tests" / "redis" / "topology.sh"


def topology(*args: str) -> str:
    """Runs topology.sh; its result is stdout's last line."""
    done = subprocess.run(
        ["bash", str(TOPOLOGY), *args], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        raise RuntimeError(f"topology.sh {args[0]} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout.strip().splitlines()[-1]


class Topologies:
    def __init__(self, cluster_dir: str, cluster_url: str, sentinel_url: str) -> None:
        self.cluster_dir = cluster_dir
        self.cluster_url = cluster_url
        self.sentinel_url = sentinel_url


@pytest.fixture(scope="module")
def topologies(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Topologies]:
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        if os.environ.get("ROOMCHAT_REQUIRE_REDIS"):
            pytest.fail("redis-server and redis-cli are not installed (Debian's redis-server), and the run requires them")
        pytest.skip("redis-server and redis-cli are not installed")
    base = tmp_path_factory.mktemp("redis-topologies")
    cluster_dir, sentinel_dir = str(base / "cluster"), str(base / "sentinel")
    try:
        cluster_url = topology("cluster", cluster_dir, "--replicas", "0", "--password", PASSWORD)
        sentinel_url = topology("sentinel", sentinel_dir, "--password", PASSWORD)
        yield Topologies(cluster_dir, cluster_url, sentinel_url)
    finally:
        for folder in (cluster_dir, sentinel_dir):
            subprocess.run(["bash", str(TOPOLOGY), "stop", folder], capture_output=True, timeout=60)


def shared(url: str, prefix: str) -> roomchat.RateLimit:
    # Generous timeouts: the servers share 2 cores with the rest of the test run.
    return roomchat.RateLimit(
        requests=100,
        window=60.0,
        redis_url=url,
        on_redis_error="fail_closed",
        redis_key_prefix=prefix,
        redis_connect_timeout=2.0,
        redis_timeout=2.0,
    )


@pytest.mark.parametrize("form", ["cluster", "sentinel"])
def test_a_call_counts_in_redis(emu: Emulator, topologies: Topologies, form: str) -> None:
    emu.seed(2)
    url = topologies.cluster_url if form == "cluster" else topologies.sentinel_url
    client = emu.client(max_retries=0, rate_limit=shared(url, f"py-topology-{form}"))
    assert len(client.list_users(limit=1).data) == 1
    state = client.rate_limit_state()
    assert (state.backend, state.degraded, state.used) == ("redis", False, 1)


def test_the_passwords_are_shown_nowhere_even_with_the_cluster_down(emu: Emulator, topologies: Topologies) -> None:
    """Runs last of the module's tests that need the servers: it stops the cluster."""
    assert "sentinel_password=" + PASSWORD in topologies.sentinel_url
    emu.seed(1)
    shown: List[str] = []
    clients: List[Tuple[str, roomchat.Client]] = []
    for form, url in (("cluster", topologies.cluster_url), ("sentinel", topologies.sentinel_url)):
        limit = shared(url, f"py-topology-shown-{form}")
        client = emu.client(max_retries=0, rate_limit=limit)
        shown += [repr(limit), str(limit.redis_url), repr(client)]
        assert limit.redis_url is not None and "REDACTED" in limit.redis_url, limit.redis_url
        clients.append((form, client))
    cluster_client = clients[0][1]
    cluster_client.list_users(limit=1)

    topology("stop", topologies.cluster_dir)
    with pytest.raises(roomchat.BudgetUnavailableError) as caught:
        cluster_client.list_users(limit=1)
    error = caught.value
    shown += [
        str(error),
        repr(error),
        repr(vars(error)),
        "".join(traceback.format_exception(error)),
        repr(cluster_client.rate_limit_state()),
    ]
    print(f"\nthe cluster down, fail_closed: {error}")
    for text in shown:
        assert PASSWORD not in text, text


BAD_FORMS = {
    "a cluster without seeds": "redis+cluster://",
    "a cluster with only a password": f"redis+cluster://:{PASSWORD}@",
    "a cluster on a unix socket": f"redis+cluster:///tmp/roomchat-cluster.sock?pass={PASSWORD}",
    "a cluster with a database other than 0": f"redis+cluster://:{PASSWORD}@127.0.0.1:7000/3",
    "sentinels without a service name": "redis+sentinel://127.0.0.1:1",
    "sentinels without a service name, with passwords": f"redis+sentinel://:{PASSWORD}@127.0.0.1:1/?sentinel_password={PASSWORD}",
}


@pytest.mark.parametrize("form", list(BAD_FORMS))
def test_a_malformed_topology_url_is_a_configuration_error(form: str) -> None:
    url = BAD_FORMS[form]
    with pytest.raises(roomchat.ConfigurationError) as caught:
        limit = roomchat.RateLimit(redis_url=url, on_redis_error="fail_closed")
        roomchat.Client("sk_test_topology", base_url="http://127.0.0.1:1", rate_limit=limit)
    error = caught.value
    print(f"\n{form}: {error}")
    for text in (str(error), repr(error), "".join(traceback.format_exception(error))):
        assert PASSWORD not in text, text
