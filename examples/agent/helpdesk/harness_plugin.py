"""The helpdesk plugin: the help desk's middleware as ``helpdesk.<name>``."""

import harnessweaver as hw
from helpdesk.middleware import RefundApproval, read_only_sql

plugin = hw.Plugin(
    namespace="helpdesk", version="1.0.0", middleware=[read_only_sql, RefundApproval]
)
