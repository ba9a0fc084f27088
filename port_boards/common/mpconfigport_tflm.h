// The qemu port's configuration for the project's boards, with
// vfs.rom_ioctl() switched on: `mpremote romfs query` and `romfs deploy`
// then work with the board's ROMFS region (board_romfs.c).
#include "mpconfigport.h"

#undef MICROPY_VFS_ROM_IOCTL
#define MICROPY_VFS_ROM_IOCTL (1)
