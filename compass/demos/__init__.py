"""Demonstrations: MAPPO training, recorded episodes, and bootstrapping the skill library from them."""
