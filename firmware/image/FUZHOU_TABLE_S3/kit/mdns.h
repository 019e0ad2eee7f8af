// The vendored ESP-IDF kit builds without the component registry, so the
// espressif/mdns component is absent; two port files (modsocket.c,
// network_wlan.c) include "mdns.h" whatever the settings, and call it only
// with MICROPY_HW_ENABLE_MDNS_QUERIES/RESPONDER on, which kit.cmake turns
// off. An empty header is all they need then.
#pragma once
