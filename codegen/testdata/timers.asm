; hale program image v5, entry app.hl

files:
  0 app.hl

types:
  t6 topic Retry { id: int, attempt: int }

consts:
  k0 string "retry "
  k1 string " attempt "

prims:

topics:
  T0 Retry payload Retry subscribers [0]

loci:
  L0 Jobs slots 1 init f0(Jobs.init) start f1(Jobs.on start)
    state s0 base: int
    on Retry f2(Jobs.on Retry)

instances:
  I0 Jobs locus L0 spawn f3(main) on main consumer 0

consumers:
  0 main "main" instances [0]

func f0 Jobs.init (init) params 0 slots 0 frame 1
  0000* loadint       r0, 250                        ; app.hl:5:21
  0001  storestate    s0(base), r0                   ; app.hl:5:5
  0002  ret.void                                     ; app.hl:4:7

func f1 Jobs.on start (start) params 0 slots 0 frame 3
  0000* loadint       r0, 1                          ; app.hl:8:29
  0001  loadint       r1, 0                          ; app.hl:8:41
  0002  loadint       r2, 1000                       ; app.hl:8:51
  0003  publish.after T0(Retry), r0, r2              ; app.hl:8:9
  0004* loadint       r0, 2                          ; app.hl:9:29
  0005  loadint       r1, 3                          ; app.hl:9:41
  0006  loadint       r2, 0                          ; app.hl:9:51
  0007  publish.after T0(Retry), r0, r2              ; app.hl:9:9
  0008  ret.void                                     ; app.hl:7:5

func f2 Jobs.on Retry (handler) params 1 slots 1 frame 5
  ; r0 r: Retry
  0000* loadk         r2, k0("retry ")               ; app.hl:13:15
  0001  field         r4, r0, 0                      ; app.hl:13:30
  0002  callb         r3, str, r4                    ; app.hl:13:26
  0003  concat.str    r2, r2, r3                     ; app.hl:13:24
  0004  loadk         r3, k1(" attempt ")            ; app.hl:13:38
  0005  concat.str    r2, r2, r3                     ; app.hl:13:36
  0006  field         r4, r0, 1                      ; app.hl:13:56
  0007  callb         r3, str, r4                    ; app.hl:13:52
  0008  concat.str    r2, r2, r3                     ; app.hl:13:50
  0009  callb         r1, print, r2                  ; app.hl:13:9
  0010* field         r1, r0, 1                      ; app.hl:14:12
  0011  jge.int.k     r1, 3, @0020                   ; app.hl:14:22
  0012* field         r1, r0, 0                      ; app.hl:15:57
  0013  field         r2, r0, 1                      ; app.hl:15:38
  0014  add.int.k     r2, r2, 1                      ; app.hl:15:48
  0015  loadstate     r3, s0(base)                   ; app.hl:15:70
  0016  field         r4, r0, 1                      ; app.hl:15:78
  0017  add.int.k     r4, r4, 1                      ; app.hl:15:88
  0018  mul.int       r3, r3, r4                     ; app.hl:15:75
  0019  publish.after T0(Retry), r1, r3              ; app.hl:15:13
  0020  ret.void                                     ; app.hl:12:5

func f3 main (spawn) params 0 slots 0 frame 0
  0000  ret.void                                     ; app.hl:21:5
