"""The link's protocol, declared once for the controller and the host
(docs/protocol.md): its version, the frame kinds, every request (who may
send it, its handler's home, its arguments, its answer), every event, the
error codes, the keys of nested objects and the secret ones, and the
service sessions' times. link/codec.py reads and writes messages by these
tables; host_tools/link/codec.py gives the host its view of them.

The tables are string constants: frozen, their text stays in flash, and
the codec reads them in place (find, startswith), so no table is built
in the heap.
"""

try:
    from micropython import const  # pyright: ignore[reportAssignmentType]  (CPython defines it below)
except ImportError:  # CPython
    def const(x):
        return x

PROTO_VERSION = 12         # bumped by any change of what the tables below put on the wire
# The service sessions' times (the answers tell the host: ttl_ms,
# expires_ms). link/service.py checks them per request, and the server's
# tick ends what outlived them too, so that no expiry waits for a request
# whose tick difference has wrapped (ticks_diff is right over 2**29 ms,
# 6.2 days).
SESSION_MS = const(300000)         # a session lasts this long after its last use
NONCE_MS = const(30000)            # a challenge must be answered within this
LOCK_MAX_MS = const(8000)          # the longest lockout after wrong MACs
# The frame kinds.
REQUEST = const(0x10)
RESPONSE = const(0x11)
EVENT = const(0x12)
ERROR = const(0x13)

# The tables: one line per message, "name field:type field:type ...", every
# field but the head ("op" of a request, "ok" of a response, "ev" of an
# event). Types: int str bool list dict any; "?" may be null, "*" may be
# absent. Fields are listed sorted; the writer sorts the keys it writes.
#
# A request is declared once, on its line of REQUESTS: its op, who may
# send it, where its handler is, its arguments, then ">" and the fields of
# its answer ("op" echoes the request's):
#   who   anyone   anyone, at any time
#         no_hand  anyone, but never during a hand
#         session  a technician's service session, each request signed
#                  and numbered (link/service.py), never during a hand (but
#                  service_close); what it did goes into the service log
#   home  the module whose function named after the op answers it:
#         server   a method of LinkServer (link/server.py), resident: hello
#                  and status, asked at once and all the time
#         commands link/commands.py, readouts link/readouts.py
#                  (resident), service link/service.py (imported at a
#                  visit's first request); a request not for anyone lives
#                  in service.py, which checks who sent it
# The server's dispatcher reads the line (route) and calls the handler.
REQUESTS = const(
    "hello anyone server proto:int > build:str fw:str op:str proto:int runtime:dict table:str\n"
    "status anyone server > cycles:int dealer:int? dice:list? fault:dict? heap:dict* lanes:list"
    " lifters:list link:dict* op:str phase:str state:str tiles_per_side:list"
    " uptime:int\n"
    "start anyone commands > op:str state:str\n"
    "clear anyone commands > cleared:int? op:str\n"
    "faults anyone readouts n:int* > faults:list op:str total:int\n"
    "config_get anyone readouts key:str* > key:str* keys:list* op:str value:any*\n"
    "hand_end anyone commands winner:int?* > op:str state:str\n"
    "kong anyone commands kind:str seat:int > op:str state:str\n"
    "service_open anyone service > nonce:str op:str ttl_ms:int\n"
    "service_auth no_hand service mac:str nonce:str time:int* > expires_ms:int op:str session:str\n"
    "service_close session service ctr:int* mac:str* session:str* > closed:bool op:str\n"
    "service_log anyone service n:int* start:int* > counts:list entries:list op:str total:int\n"
    "jog session service actuator:str ctr:int* mac:str* ms:int n:int* session:str* > op:str"
    " state:str\n"
    "hand anyone readouts > active:bool drawable:int* gold:str?* head:list?* marker:list?* n:int*"
    " op:str phase:str* reserve:int* tail:list?* turn:int* wall:int*\n"
    "counters anyone readouts > cycles:int faults:list hands:int lifts:int lost:str* op:str"
    " tiles_fed:list unsaved:int\n"
    "sensors anyone readouts > buzzer:int keys:list lanes:list lifters:list motors:list"
    " moving:list op:str plate:list\n"
    "dice_test session service ctr:int* mac:str* n:int session:str* > counts:list op:str\n"
    "new_game session service ctr:int* mac:str* session:str* > dealer:int op:str\n"
    "config_set session service ctr:int* key:str mac:str* session:str* value:any > key:str op:str"
    " restart:bool value:any\n"
    "rfid_scan session service ctr:int* mac:str* session:str* > op:str state:str\n"
    "rfid_audit session service ctr:int* mac:str* session:str* > kinds:int op:str tags:int"
    " tiles:list unknown:int\n"
    "rfid_learn session service ctr:int* mac:str* session:str* > changed:int new:int op:str"
    " restart:bool tags:int\n"
)
WHO = const(("anyone", "no_hand", "session"))
HOMES = const(("server", "commands", "readouts", "service"))
EVENTS = const(           # "t": ms since boot; the other fields are public facts
    "state phase:str* state:str t:int\n"
    "fault code:int detail:dict name:str t:int\n"
    "dice a:int b:int dealer:int gold:bool* t:int\n"
    "cleared code:int resume:str* t:int\n"
    "walls next:bool* t:int tiles_per_side:list\n"
    "refused reason:str seat:int t:int\n"
    "hand drawable:int gold:str? head:list? kind:str* marker:list? n:int op:str phase:str"
    " reserve:int seat:int* slot:int* t:int tail:list? wall:int\n"
    "hand_resumed dice:list drawable:int gold:str? gold_dice:list? head:list? marker:list? n:int"
    " phase:str reserve:int t:int tail:list? wall:int\n"
    "irregular reason:str slot:int t:int\n"
    "result dealer:int streak:int t:int winner:int? wins_in_row:int\n"
    "jog lane:int ms:int name:str t:int\n"
    "jogged count:int end:str lane:int ms:int name:str t:int\n"
    "scanned sides:int t:int tags:int\n"
    "slow learned:int ms:int name:str side:int* t:int\n"
    "auth_alarm t:int wrong:int\n"
)
# An error's code, its English text for a human, and the facts a host
# says it by in the technician's language: `why`, a word naming the
# reason (docs/protocol.md, Errors, lists them), and the fields that word
# takes.
ERROR_FIELDS = const("error:str got:any* gpio:int* hi:int* key:str* lo:int* message:str n:int*"
                     " op:str* other:any* proto:int* retry_ms:int* slot:int* state:str*"
                     " switch:str* why:str*")   # head "ok": false
# The error codes, for the host and the docs (the controller writes them
# as literals).
ERRORS = const("bad_json bad_kind bad_request unknown_op proto_mismatch"     # on the wire
          " busy refused auth_failed no_session session_expired not_found too_big internal"
          " config_invalid firmware_corrupt")
HOST_ERRORS = const("not_public bad_value bad_response bad_event timeout closed")
# The keys of nested objects.
NESTED = const("alloc bad_crc bits chip cmd code count detail dropped end entropy errors expected"
          " free frozen garbage got gpio hi key lane lo micropython ms name other overruns pin"
          " port reason requests seat sensor side slot slots state t why")
SECRET_KEYS = const(("tile", "tiles", "uid"))   # at any depth, only with reveal=True
