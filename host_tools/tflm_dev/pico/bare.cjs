// A bare-metal ELF file on the emulated RP2040 (npm package rp2040js), for
// the cycle estimator's checks (host_tools/tflm_dev/cycles.py): no bootrom,
// no boot stage 2; the ELF's loadable segments go into flash (0x10000000)
// and SRAM (0x20000000), the core starts from the vector table at the start
// of the first segment (stack pointer, reset address).
//
//   node bare.cjs FILE.elf [MARK_ADDRESS ...]
//
// Each time the instruction at a mark address is about to run, prints
// "mark SEQ pc=0x... insns=N cycles=C" (the emulator's counters since the
// start). Semihosting (BKPT 0xAB): SYS_WRITE0 prints, SYS_EXIT stops.
'use strict';

const fs = require('fs');
const { RP2040 } = require('rp2040js');

const FLASH_BASE = 0x10000000;
const SRAM_BASE = 0x20000000;
const LIMIT = 20e9; // instructions before giving up

function loadElf(mcu, path) {
  const data = fs.readFileSync(path);
  if (data.readUInt32BE(0) !== 0x7f454c46 || data[4] !== 1 || data[5] !== 1) {
    throw new Error(`${path}: not a 32-bit little-endian ELF file`);
  }
  const phoff = data.readUInt32LE(0x1c);
  const phentsize = data.readUInt16LE(0x2a);
  const phnum = data.readUInt16LE(0x2c);
  let first = null;
  for (let i = 0; i < phnum; i++) {
    const ph = phoff + i * phentsize;
    if (data.readUInt32LE(ph) !== 1) continue; // PT_LOAD
    const offset = data.readUInt32LE(ph + 4);
    const paddr = data.readUInt32LE(ph + 12);
    const filesz = data.readUInt32LE(ph + 16);
    const memsz = data.readUInt32LE(ph + 20);
    const bytes = data.subarray(offset, offset + filesz);
    let mem;
    let base;
    if (paddr >= FLASH_BASE && paddr + memsz <= FLASH_BASE + mcu.flash.length) {
      mem = mcu.flash;
      base = FLASH_BASE;
    } else if (paddr >= SRAM_BASE && paddr + memsz <= SRAM_BASE + mcu.sram.length) {
      mem = mcu.sram;
      base = SRAM_BASE;
    } else {
      throw new Error(`${path}: segment at 0x${paddr.toString(16)} (+${memsz}) is outside flash and SRAM`);
    }
    mem.set(bytes, paddr - base);
    mem.fill(0, paddr - base + filesz, paddr - base + memsz);
    if (first === null && filesz >= 8) first = paddr;
  }
  if (first === null) throw new Error(`${path}: no loadable segment`);
  return first;
}

function readString(mcu, addr) {
  let s = '';
  for (let c = mcu.readUint8(addr); c !== 0; c = mcu.readUint8(++addr)) s += String.fromCharCode(c);
  return s;
}

function main() {
  const [path, ...markArgs] = process.argv.slice(2);
  if (!path) throw new Error('usage: node bare.cjs FILE.elf [MARK_ADDRESS ...]');
  const marks = new Set(markArgs.map((a) => Number(a) & ~1));
  const mcu = new RP2040();
  mcu.logger = { debug() {}, info() {}, warn() {}, error(name, msg) { process.stderr.write(`[${name}] ${msg}\n`); } };
  const vectors = loadElf(mcu, path);
  const { core } = mcu;
  core.SP = mcu.readUint32(vectors);
  core.PC = mcu.readUint32(vectors + 4) & ~1;
  let done = false;
  let status = 0;
  const out = [];
  mcu.onBreak = (code) => {
    if (code !== 0xab) {
      process.stderr.write(`breakpoint ${code} at 0x${(core.PC - 2).toString(16)}\n`);
      done = true;
      status = 3;
      return;
    }
    const op = core.registers[0];
    const arg = core.registers[1];
    if (op === 0x04) out.push(readString(mcu, arg));
    else if (op === 0x18) done = true;
    core.registers[0] = 0;
  };
  let insns = 0;
  let seq = 0;
  const lines = [];
  while (!done) {
    if (marks.has(core.PC)) {
      lines.push(`mark ${seq++} pc=0x${core.PC.toString(16)} insns=${insns} cycles=${core.cycles} ` +
        `min=${core.cycles} max=${core.cycles}`);
    }
    core.executeInstruction();
    insns++;
    if (insns > LIMIT) throw new Error(`no exit after ${LIMIT} instructions (pc 0x${core.PC.toString(16)})`);
  }
  process.stdout.write(lines.join('\n') + (lines.length ? '\n' : '') + out.join(''));
  process.exit(status);
}

try {
  main();
} catch (e) {
  process.stderr.write(`bare.cjs: ${e.message}\n`);
  process.exit(2);
}
