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
    # keys, vboard, multiplexer
    "key.missing": "没有密钥文件 {file}",
    "key.is_folder": "{file} 是文件夹，不是密钥文件",
    "key.unreadable": "无法读取密钥文件 {file}：{why}",
    "key.size": "{file} 有 {n} 字节：牌桌密钥应为 {want} 字节",
    "key.unwritable": "无法写入密钥文件 {file}：{why}",
    "deploy.no_uid": "主板没有给出其唯一编号（machine.unique_id()）：请用 KEY=keys/<牌桌>.key 指定该牌桌的密钥文件",
    "deploy.key_missing": "没有密钥文件 {file}，而主板上已有密钥（指纹 {board}）：请用 KEY= 指定该牌桌的密钥文件，或用 NEW_KEY=1（deploy --new-key）生成新密钥并替换主板上的密钥",
    "deploy.key_other": "主板上的密钥（指纹 {board}）不是 {file} 的密钥（指纹 {fp}）：请用 KEY= 指定本牌桌的密钥文件，或用 NEW_KEY=1（deploy --new-key）替换主板上的密钥",
    "deploy.key_kept": "密钥 {file}，指纹 {fp}：主板上已是此密钥",
    "deploy.key_installed": "密钥 {file}，指纹 {fp}：已装入主板",
    "deploy.key_made": "密钥 {file}，指纹 {fp}：新生成并已装入主板；请保管好此文件并另存一份，只有它能在本牌桌上开启维修会话",
    "deploy.key_replaced": "密钥 {file}，指纹 {fp}：已替换主板上的密钥（指纹 {board}）；旧密钥不能再在本牌桌上开启维修会话",
    "sim.key": "维修密钥 {file}，指纹 {fp}{made}",
    "sim.key_made": "（新生成）",
    "vboard.repl": "虚拟主板：REPL 在 {port}，闪存在 {folder}，唯一编号 {uid}",
    "vboard.deploy": "部署到它：  make deploy PORT={port}",
    "vboard.wait": "然后在此按回车，让它在虚拟牌桌上通电 ",
    "vboard.on": "已通电；它的链路：{link}",
    "vboard.try": "  .venv/bin/mjctl --port {link} --key {keyfile} selftest",
    "vboard.stop": "（按 Ctrl-C 停止）",
    "vboard.no_key": "  （主板上没有维修密钥：部署会给它一个）",
    "vboard.stopped": "虚拟主板已停止：{why}",
    "mux.cannot_start": "无法共享 {port}：端口共享进程没有启动（{why}）",
    "mux.open_failed": "无法打开 {port}：{why}",
    "mux.busy": "{port} 被另一个程序占用{who}：请关闭它后重试",
    "mux.busy_pid": "（进程 {pid}）",
}

FAULTS = {
}
