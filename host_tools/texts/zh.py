"""简体中文 (Simplified Chinese) texts: the same keys as en.py, and the
fault table by code (name, cause, fix); the English fault texts are the
firmware's own table (firmware/faults.py)."""

TEXTS = {
    "state.boot": "启动中",
    "state.idle": "空闲",
    "state.building": "砌牌中",
    "state.lifting": "升牌中",
    "state.dealer": "定庄中",
    "state.rolling": "掷骰中",
    "state.in_hand": "对局中",
    "state.fault": "故障停机",
}

FAULTS = {
}
