"""A deployment's pure logic: config-download (the Ansible project of a deployed
stack: inventory, software deployments, network configs, playbook includes), the
Ansible runs and their options (deploy, minor update, major upgrade, scale down),
TripleO's validations, and the progress of long work.  No I/O of its own."""
