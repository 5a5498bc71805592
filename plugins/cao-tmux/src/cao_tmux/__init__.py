"""tmux terminal backend for cao: ``cao_tmux.backend.TmuxBackend`` (registered as backend ``tmux``)."""
