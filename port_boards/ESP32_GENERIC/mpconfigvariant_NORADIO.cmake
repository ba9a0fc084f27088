# The board without Espressif's radio libraries (BOARD_VARIANT=NORADIO): no
# Wi-Fi, ESP-NOW or Bluetooth, everything else as the full board. It builds
# from source alone (CONFIG_APP_NO_BLOBS), which is what `make firmware
# BOARD=ESP32_GENERIC` does without an ESP-IDF of your own: from the offline
# ESP-IDF of ../shared/sdk/esp32, whose Mbed TLS is upstream's (no hooks for
# the ESP32's big-number accelerator) and which leaves out the Wi-Fi blobs.
list(REMOVE_ITEM SDKCONFIG_DEFAULTS boards/sdkconfig.ble)
list(APPEND SDKCONFIG_DEFAULTS ${CMAKE_CURRENT_LIST_DIR}/sdkconfig.noradio)

list(APPEND MICROPY_DEF_BOARD
    MICROPY_HW_BOARD_NAME="Generic ESP32 module with tflm, no radio"
    MICROPY_PY_NETWORK_WLAN=0
    MICROPY_PY_ESPNOW=0
    MICROPY_PY_BLUETOOTH=0
    # mDNS answers on a network interface; this board has none by default.
    MICROPY_HW_ENABLE_MDNS_QUERIES=0
    MICROPY_HW_ENABLE_MDNS_RESPONDER=0
)

# The port includes mdns.h whatever it enables; the mdns component is a
# managed dependency (fetched by ESP-IDF's component manager, which an
# offline build turns off): its headers come from the offline copy, given by
# the project's make as TFLM_ESP32_MDNS_INCLUDE.
if(TFLM_ESP32_MDNS_INCLUDE)
    include_directories(${TFLM_ESP32_MDNS_INCLUDE})
endif()

# Only the components the port's main component requires, and theirs:
# ESP-IDF otherwise compiles every component it has (about 170 more files,
# none of them linked into this firmware).
set(COMPONENTS main)
