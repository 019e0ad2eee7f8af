"""Long runs that check the firmware on the virtual table (docs/reliability.md):
    soak/         hand after hand with faults injected and repaired (`make soak`)
    powercuts/    the power cut at random instants, each reboot checked (`make powercuts`)
    linkfuzz/     damaged and random frames, in process and on a live link
"""
