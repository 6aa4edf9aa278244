"""Servers' pure logic: node import files to Ironic node specs, which node serves
which instance of a baremetal deployment, and the environment and isolated-network
addresses of pre-provisioned (deployed) servers.  No I/O of its own."""
