; hale program image v2, entry app.hl

files:
  0 app.hl

types:
  t6 type P { x: int }
  t7 [int]

consts:
  k0 string " has "
  k1 int 21479030816
  k2 string " and "
  k3 int 562984392851488
  k4 string " ("
  k5 string ") "
  k6 string " "
  k7 int 38660997162
  k8 string "{braces}"
  k9 string "bob"
  k10 float 3.14159

prims:

topics:

loci:
  L0 L slots 0 init f1(L.init) start f2(L.on start)

instances:
  I0 L locus L0 spawn f3(main) on main consumer 0

consumers:
  0 main "main" instances [0]

func f0 show (fn) params 4 slots 8 frame 23 -> string
  ; r0 name: string
  ; r1 n: int
  ; r2 f: float
  ; r3 p: P
  ; r4 all: string
  ; r5 lone: string
  ; r6 same: string
  ; r7 text: string
  0000  move          r8, r0                         ; app.hl:5:67
  0001  loadk         r9, k0(" has ")                ; app.hl:5:22
  0002  move          r19, r1                        ; app.hl:5:73
  0003  loadk         r20, k1(21479030816)
  0004  callb         r10, format.int, r19
  0005  loadk         r11, k2(" and ")               ; app.hl:5:22
  0006  move          r19, r2                        ; app.hl:5:76
  0007  loadk         r20, k3(562984392851488)
  0008  callb         r12, format.float, r19
  0009  loadk         r13, k4(" (")                  ; app.hl:5:22
  0010  move          r19, r1                        ; app.hl:5:79
  0011  loadint       r20, 20971552
  0012  callb         r14, format.int, r19
  0013  loadk         r15, k5(") ")                  ; app.hl:5:22
  0014  move          r19, r3                        ; app.hl:5:82
  0015  callb         r16, str, r19
  0016  loadk         r17, k6(" ")                   ; app.hl:5:22
  0017  move          r22, r1                        ; app.hl:5:86
  0018  new.list      r21, r22, 1                    ; app.hl:5:85
  0019  callb         r19, str, r21
  0020  loadk         r20, k7(38660997162)
  0021  callb         r18, format.str, r19
  0022  concat.n      r4, r8, 11                     ; app.hl:5:22
  0023  move          r8, r1                         ; app.hl:6:29
  0024  callb         r5, str, r8
  0025  move          r6, r0                         ; app.hl:7:29
  0026  loadk         r7, k8("{braces}")             ; app.hl:8:23
  0027  concat.str    r10, r4, r5                    ; app.hl:9:16
  0028  concat.str    r9, r10, r6                    ; app.hl:9:23
  0029  concat.str    r8, r9, r7                     ; app.hl:9:30
  0030  ret           r8                             ; app.hl:9:5

func f1 L.init (init) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:11:7

func f2 L.on start (start) params 0 slots 0 frame 6
  0000  loadk         r1, k9("bob")                  ; app.hl:12:27
  0001  loadint       r2, -42                        ; app.hl:12:34
  0002  loadk         r3, k10(3.14159)               ; app.hl:12:39
  0003  loadint       r5, 1                          ; app.hl:12:55
  0004  new.struct    r4, r5, t6(P)                  ; app.hl:12:48
  0005  call          r1, f0(show)                   ; app.hl:12:22
  0006  callb         r0, print, r1                  ; app.hl:12:16
  0007  ret.void                                     ; app.hl:12:5

func f3 main (spawn) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:14:8
