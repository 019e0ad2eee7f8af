"""What the table view's tests share (test_tableview_render.py, and
test_texts.py's view in Chinese): a view state with every panel filled."""

from host_tools.cli.ops import describe_fault
from host_tools.view import tableview


def _full_view():
    view = tableview.ViewState(seed=3, speed=5.0, code="mpy", target=4)
    view.state = "fault"
    view.cycles = 2
    view.last_cycle = {"n": 2, "dice": [3, 5], "dealer": 1, "table_time_s": 33.1,
                       "lower_bound_s": 32.4}
    view.result = {"winner": 2, "dealer": 3, "wins_in_row": 0, "streak": 0, "t": 4000}
    view.hands = 1
    view.fault = dict(describe_fault({"code": 10, "t": 6100, "detail": {"lane": 1, "count": 0}}),
                      active=True, cleared_t=None, resume=None)
    view.fix_at = 20000
    for i, (name, fields) in enumerate([("state", {"state": "building"}),
                                        ("walls", {"tiles_per_side": [36, 36, 36, 36]}),
                                        ("fault", {"code": 10, "detail": {"lane": 1},
                                                   "name": "lane_jam"})]):
        view.record(1000 * i, name, fields)
    view.record(4000, "result", {"dealer": 3, "streak": 0, "winner": 2, "wins_in_row": 0})
    view.record(5000, "start", {}, host=True)
    return view
