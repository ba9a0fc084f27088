// The real RPI_PICO firmware on an emulated RP2040 (npm package rp2040js),
// with the board's USB serial port (CDC) on a TCP socket: any raw-REPL client
// (tflm-host, mpremote connect socket://127.0.0.1:PORT) can drive it.
//
//   node emulator.cjs --bootrom B1.bin --firmware firmware.uf2 \
//       [--image FILE@0x100000 ...] [--listen 127.0.0.1:0]
//
// Prints one line, "serial socket://HOST:PORT", once it listens; powers the
// board on when the first client connects; runs until its standard input
// closes (the parent is gone) or it gets SIGTERM.
//
// Counters for benchmarks: a write of 1 (cycles) or 2 (instructions) to the
// WATCHDOG's SCRATCH0 register latches that counter, since boot, into
// SCRATCH1 (low word) and SCRATCH2 (high word), where the firmware reads it
// (machine.mem32). A write of 3 (cycles) or 4 (instructions) latches the
// count's low 30 bits into SCRATCH1 alone: one read that MicroPython gets as
// a small int, so timing a span allocates nothing (device.py's
// PICO_COUNTERS). A write of 5 (cycles) or 6 (instructions) latches the
// count when the firmware's output first ended with the REPL's prompt (all
// ones before that): the firmware prints it in answer to the client's first
// bytes, which go in as soon as the board's USB port is configured. The
// board is powered on when the first client connects, so that count is the
// same whenever the client comes. The firmware is unchanged: only the
// emulator answers.
'use strict';

const fs = require('fs');
const net = require('net');
const { RP2040, USBCDC, LogLevel } = require('rp2040js');

const FLASH_BASE = 0x10000000;
const WATCHDOG_SCRATCH0 = 0x0c;
// Instructions per slice of emulation between two looks at the sockets.
const SLICE = 200000;

function parseArgs(argv) {
  const args = { images: [], listen: '127.0.0.1:0' };
  for (let i = 0; i < argv.length; i += 2) {
    const [key, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${key} needs a value`);
    if (key === '--bootrom') args.bootrom = value;
    else if (key === '--firmware') args.firmware = value;
    else if (key === '--listen') args.listen = value;
    else if (key === '--image') {
      const at = value.lastIndexOf('@');
      if (at < 0) throw new Error('--image needs FILE@OFFSET');
      args.images.push({ path: value.slice(0, at), offset: Number(value.slice(at + 1)) });
    } else throw new Error(`unknown option ${key}`);
  }
  if (!args.bootrom || !args.firmware) throw new Error('--bootrom and --firmware are needed');
  return args;
}

// A UF2 file is 512-byte blocks, each with a flash address and up to 476
// bytes of payload; a .bin file is the flash image from offset 0.
function flashImage(path) {
  const data = fs.readFileSync(path);
  if (!path.endsWith('.uf2')) return { offset: 0, bytes: data };
  const flash = Buffer.alloc(2 * 1024 * 1024, 0xff);
  let end = 0;
  for (let pos = 0; pos + 512 <= data.length; pos += 512) {
    const magic0 = data.readUInt32LE(pos);
    const magic1 = data.readUInt32LE(pos + 4);
    const magicEnd = data.readUInt32LE(pos + 508);
    if (magic0 !== 0x0a324655 || magic1 !== 0x9e5d5157 || magicEnd !== 0x0ab16f30) {
      throw new Error(`${path}: block at ${pos} is not a UF2 block`);
    }
    const addr = data.readUInt32LE(pos + 12);
    const size = data.readUInt32LE(pos + 16);
    const offset = addr - FLASH_BASE;
    if (size > 476 || offset < 0 || offset + size > flash.length) {
      throw new Error(`${path}: block at ${pos} targets 0x${addr.toString(16)} (+${size})`);
    }
    data.copy(flash, offset, pos + 32, pos + 32 + size);
    end = Math.max(end, offset + size);
  }
  return { offset: 0, bytes: flash.subarray(0, end) };
}

// rp2040js logs to the console and throws on errors; here its messages go
// to stderr, so standard output only carries the "serial" line. Its warnings
// (peripherals it does not model: QSPI pads, the SSI, some USB registers,
// touched on every boot) only with TFLM_PICO_VERBOSE=1.
const verbose = process.env.TFLM_PICO_VERBOSE === '1';
const logger = {
  debug() {},
  info() {},
  warn(name, msg) { if (verbose) process.stderr.write(`[${name}] ${msg}\n`); },
  error(name, msg) { process.stderr.write(`error: [${name}] ${msg}\n`); },
};

function main() {
  const args = parseArgs(process.argv.slice(2));
  const mcu = new RP2040();
  mcu.logger = logger;
  const rom = fs.readFileSync(args.bootrom);
  mcu.loadBootrom(new Uint32Array(rom.buffer, rom.byteOffset, rom.length >> 2)); // also erases the flash
  const fw = flashImage(args.firmware);
  mcu.flash.set(fw.bytes, fw.offset);
  for (const image of args.images) mcu.flash.set(fs.readFileSync(image.path), image.offset);
  // Boot2 runs in place from flash: starting at the bootrom's reset vector
  // never reaches it in this emulator.
  mcu.core.PC = FLASH_BASE;

  let instructions = 0;
  // The counts when the output first ended with the prompt (-1: not yet).
  const boot = { cycles: -1, instructions: -1 };
  const watchdog = mcu.peripherals[0x40058];
  const watchdogWrite = watchdog.writeUint32.bind(watchdog);
  watchdog.writeUint32 = (offset, value) => {
    watchdogWrite(offset, value);
    if (offset === WATCHDOG_SCRATCH0 && (value === 5 || value === 6)) {
      const count = value === 5 ? boot.cycles : boot.instructions;
      watchdog.scratchData[1] = count < 0 ? 0xffffffff : count % 0x100000000;
      watchdog.scratchData[2] = count < 0 ? 0xffffffff : Math.floor(count / 0x100000000);
    } else if (offset === WATCHDOG_SCRATCH0 && (value === 1 || value === 2)) {
      const count = value === 1 ? mcu.core.cycles : instructions;
      watchdog.scratchData[1] = count % 0x100000000;
      watchdog.scratchData[2] = Math.floor(count / 0x100000000);
    } else if (offset === WATCHDOG_SCRATCH0 && (value === 3 || value === 4)) {
      watchdog.scratchData[1] = (value === 3 ? mcu.core.cycles : instructions) % 0x40000000;
    }
  };

  // Serial: bytes from the client wait here until the board's USB port is
  // configured, then go in no faster than the emulated host controller's
  // 512-byte FIFO takes them (it drops the rest); the firmware's USB stack
  // pulls from that FIFO only when its own buffers have room.
  const cdc = new USBCDC(mcu.usbCtrl);
  let connected = false;
  let pending = Buffer.alloc(0);
  let client = null;
  const held = []; // output while no client is connected
  cdc.onDeviceConnected = () => { connected = true; };
  let lastOut = '';
  cdc.onSerialData = (data) => {
    const chunk = Buffer.from(data);
    if (boot.cycles < 0) {
      lastOut = (lastOut + chunk.toString('latin1')).slice(-4);
      if (lastOut === '>>> ') {
        boot.cycles = mcu.core.cycles;
        boot.instructions = instructions;
      }
    }
    if (client) client.write(chunk);
    else held.push(chunk);
  };
  function feed() {
    if (!connected || pending.length === 0) return;
    const room = cdc.txFIFO.size - cdc.txFIFO.itemCount;
    const n = Math.min(room, pending.length);
    for (let i = 0; i < n; i++) cdc.sendSerialByte(pending[i]);
    pending = pending.subarray(n);
  }

  let powered = false;
  const server = net.createServer((socket) => {
    if (!powered) {
      powered = true;
      setImmediate(run);
    }
    if (client) client.destroy(); // one client at a time: the newest wins
    client = socket;
    socket.setNoDelay(true);
    for (const chunk of held.splice(0)) socket.write(chunk);
    socket.on('data', (data) => { pending = Buffer.concat([pending, data]); });
    socket.on('close', () => { if (client === socket) client = null; });
    socket.on('error', () => {});
  });
  const colon = args.listen.lastIndexOf(':');
  server.listen(Number(args.listen.slice(colon + 1)), args.listen.slice(0, colon), () => {
    const { address, port } = server.address();
    process.stdout.write(`serial socket://${address}:${port}\n`);
  });

  // Emulation in slices, the event loop (sockets) in between. While the core
  // sleeps (WFI/WFE) the clock jumps to the next timer alarm; a board that
  // only sleeps and has no input waits a millisecond of real time, so an idle
  // REPL does not take a whole host core.
  const { core, clock } = mcu;
  const nanosPerCycle = 1e9 / 125e6;
  function run() {
    feed();
    let idle = 0;
    for (let i = 0; i < SLICE; i++) {
      if (core.waiting) {
        const nanos = clock.nanosToNextAlarm;
        clock.tick(nanos > 0 ? nanos : 1000);
        idle++;
        if (idle > 64 && pending.length === 0) break;
        continue;
      }
      const cycles = core.executeInstruction();
      instructions++;
      clock.tick(cycles * nanosPerCycle);
    }
    if (idle > 64 && pending.length === 0) setTimeout(run, 1);
    else setImmediate(run);
  }

  process.stdin.on('data', () => {});
  process.stdin.on('end', () => process.exit(0));
  process.on('SIGTERM', () => process.exit(0));
}

try {
  main();
} catch (e) {
  process.stderr.write(`emulator: ${e.message}\n`);
  process.exit(2);
}
