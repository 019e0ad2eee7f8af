"""Watching the table:
    tableview/   the virtual table playing hands with the real firmware (`make run`)
    wallview.py  the rules core's walls through a random hand
"""
