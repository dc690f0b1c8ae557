"""NetConfig: network configuration and troubleshooting (``textgyms/NetConfig-v4``)."""

from textgyms.extras import require

require("net", "networkx")  # every NetConfig module needs it: fail here, naming the extra
