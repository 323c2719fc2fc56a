"""A simulated two-node Ray cluster (ray.cluster_utils.Cluster: a head and a worker node, 1 CPU each), started once
for the module's tests and shut down after them."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(scope="package")
def two_nodes():
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, connect=False, head_node_args={"num_cpus": 1, "include_dashboard": False})
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, logging_level=logging.ERROR, log_to_driver=False)
    cluster.wait_for_nodes()
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()
