# The pyboard's frozen modules as the port's PYBV10/PYBV11 boards have them
# (asyncio, dht, onewire), less the LCD160CR skin's driver: the firmware text
# (576 KiB, tflm_pybv11.ld) holds every kernel only without it. A skin's
# owner installs the driver with `mpremote mip install lcd160cr`.
include("$(PORT_DIR)/boards/manifest.py")
include("$(MPY_DIR)/extmod/asyncio")
require("dht")
require("onewire")
