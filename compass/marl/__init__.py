"""MAPPO in JAX: recurrent shared actor, centralised critic, GAE, clipped PPO (``compass demos train``)."""
