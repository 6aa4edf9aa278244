"""The python-openstackclient plugin: ``openstack tripleo ...`` runs the tripleo-flow
commands (:mod:`tripleo_flow.openstack.plugin`, :mod:`tripleo_flow.openstack.commands`)."""
