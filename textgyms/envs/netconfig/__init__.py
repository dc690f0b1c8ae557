"""NetConfig: network configuration and troubleshooting (``textgyms/NetConfig-v0``)."""
