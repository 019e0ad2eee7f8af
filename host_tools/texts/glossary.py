"""The table's parts, states and actions: one Chinese term each, as a
parlour says it (docs/zh/glossary.md is the same list for people).

A technician who reads 通道 on one screen and 牌道 on the next cannot tell
whether they are the same part, so every Chinese text and doc uses the
term here and none of the synonyms after it (test_glossary checks). A
synonym is a regular expression: 座位 is a seat's plain name (a column's
head), 座位 2 is the numbered seat written another way.

    concept: (English term, Chinese term, (synonyms not to use))
"""

TERMS = {
    "table": ("table", "牌桌", ("麻将桌",)),
    "controller": ("controller", "控制器", ("主控", "控制板")),
    "board": ("board", "主板", ("电路板", "开发板")),
    "plate": ("plate", "大盘", ("洗牌盘", "洗牌大盘", "转盘")),
    "lane": ("lane", "牌道", ("通道",)),
    "lifter": ("lifter", "升降台", ("升降机", "升降板")),
    "tray": ("tray", "托盘", ("接牌盘", "牌盒")),
    "wall": ("wall", "牌墙", ("牌垛",)),
    "limit switch": ("limit switch", "限位开关", ("行程开关",)),
    "count sensor": ("count sensor", "计数传感器", ("光电开关", "计牌传感器")),
    "reader": ("RFID reader", "读卡器", ("读写器", "射频头")),
    "display board": ("display board", "显示板", ("显示屏",)),
    "seat": ("seat N", "N号位", (r"座位\s*(?:\d|\{)", r"第\s*(?:\d|\{[^}]*\}|[一二三四])\s*座")),
    "build": ("build", "码牌", ("砌牌",)),
    "lift": ("lift", "升牌", ("顶牌",)),
    "feed": ("feed", "送牌", ("推牌",)),
    "audit": ("audit", "核对", ("核查",)),
    "cycle": ("cycle", "一轮（计数：轮数）", ("循环",)),
    "jog": ("jog", "点动", ("寸动",)),
    "self-test": ("self-test", "自检", ("自我测试",)),
    "fault stop": ("stopped by a fault", "故障停机", ()),
    "clear": ("clear (a fault)", "清除故障", ("故障复位",)),
    "technician": ("technician", "维修员", ("维修人员", "技师")),
    "service session": ("service session", "维修会话", ("服务会话",)),
    "key": ("service key", "密钥", ("钥匙",)),
}
