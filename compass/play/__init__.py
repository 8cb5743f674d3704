"""compass play: a person controls one agent in the browser while compass agents control the rest."""
