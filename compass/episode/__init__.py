"""Playing episodes: the one pipeline every command plays through (:mod:`compass.episode.pipeline`)."""
