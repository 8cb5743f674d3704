"""Environment adapters: each turns a native environment into per-agent ``AgentView``s."""
