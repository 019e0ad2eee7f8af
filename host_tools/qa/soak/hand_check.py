"""Each hand the controller followed against the rules' replay of what
its players did: the players the hand belongs to, whether its states
match, and what a mismatch's report keeps."""

from engine_core.replay import PUBLIC_KEYS


def players_of(parlour, t):
    """The players of the hand that ended at t (the firmware's clock is the
    table's): those of the last walls up before it. The table runs ahead of
    the soak's loop, which reads the link in wall time: by the time it reads
    a result, the next set's walls may be up and its players the current."""
    for players in reversed(parlour.hands):
        if players.walls_up_at is not None and players.walls_up_at <= t:
            return players
    return parlour.current


def same_as_replay(observed, want):
    """Whether the states the controller published are the replay's, one
    for one, on the public keys."""
    return len(want) == len(observed) and all(
        {k: a[k] for k in PUBLIC_KEYS} == {k: b[k] for k in PUBLIC_KEYS}
        for a, b in zip(observed, want))


def first_difference(n, players, observed, want):
    """What a mismatched hand's report keeps: its number, the players'
    seed, and the first state that differs (observed, replayed), or the
    replay's refusal of the hand's scenario."""
    if isinstance(want, dict):
        return {"hand": n, "players": players.seed, "events": len(observed),
                "replay_error": want.get("error")}
    for i, (a, b) in enumerate(zip(observed, want)):
        a = {k: a[k] for k in PUBLIC_KEYS}
        b = {k: b[k] for k in PUBLIC_KEYS}
        if a != b:
            return {"hand": n, "players": players.seed, "event": i, "observed": a, "replay": b,
                    "events": len(observed), "replayed": len(want)}
    return {"hand": n, "players": players.seed, "events": len(observed), "replayed": len(want)}
