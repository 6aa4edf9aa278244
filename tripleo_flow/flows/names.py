"""The names that flow between tasks (TaskFlow ``requires`` / ``provides``).

Inputs a caller gives a flow are listed first; what tasks provide follows.
Keeping them here makes the data flow of every flow readable in one place.
"""

# -- inputs ------------------------------------------------------------------
PLAN = "plan"
TEMPLATES = "templates"
DESCRIPTION = "description"
OUTPUT = "output"
FORCE = "force"
PARAMETERS = "parameters"
PARAMETER_NAMES = "names"
PARAMETER_KEY = "key"
ENVIRONMENTS = "environments"
PURGE = "purge"
ROLES = "roles"
NETWORKS = "networks"
ROTATE = "rotate"
DO_NOT_ROTATE = "do_not_rotate"

# -- provided by actions -----------------------------------------------------
PLAN_CREATED = "plan_created"
PLAN_UPDATED = "plan_updated"
PLAN_DELETED = "plan_deleted"
PLANS = "plans"
EXPORT_PATH = "export_path"
RENDERED = "rendered"
PASSWORDS_GENERATED = "passwords_generated"
PASSWORDS_ROTATED = "passwords_rotated"
PASSWORDS = "passwords"
PARAMETERS_UPDATED = "parameters_updated"
PARAMETERS_RESET = "parameters_reset"
CAPABILITIES = "capabilities"
CAPABILITIES_UPDATED = "capabilities_updated"
ROLES_LIST = "roles_list"
ROLES_UPDATED = "roles_updated"
ROLES_VALID = "roles_valid"
NETWORKS_LIST = "networks_list"
NETWORKS_UPDATED = "networks_updated"
NETWORKS_VALID = "networks_valid"
PLAN_HISTORY = "plan_history"
PLAN_RESTORED = "plan_restored"
